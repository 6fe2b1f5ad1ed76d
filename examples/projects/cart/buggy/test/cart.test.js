'use strict';

const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { subtotal, total } = require('../src/cart.js');

const LINES = [
  { price: 1250, quantity: 2 },
  { price: 499, quantity: 1 },
];

describe('cart', () => {
  describe('subtotal', () => {
    it('adds price times quantity', () => {
      assert.equal(subtotal(LINES), 2999);
    });

    it('is zero for an empty cart', () => {
      assert.equal(subtotal([]), 0);
    });
  });

  describe('total', () => {
    it('equals the subtotal without a discount', () => {
      assert.equal(total(LINES), 2999);
    });

    it('takes a percentage off the subtotal', () => {
      assert.equal(total(LINES, 10), 2699);
    });

    it('rounds the discount to the nearest cent', () => {
      assert.equal(total([{ price: 999, quantity: 1 }], 15), 849);
    });
  });
});
