'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { tokenize, countWords, topWords } = require('../src/wordfreq.js');

test('tokenize splits on punctuation and spaces', () => {
  assert.deepEqual(tokenize("It's a test, a small one."), ["It's", 'a', 'test', 'a', 'small', 'one']);
});

test('countWords ignores case', () => {
  assert.deepEqual([...countWords('The cat saw the dog. THE end')], [
    ['the', 3],
    ['cat', 1],
    ['saw', 1],
    ['dog', 1],
    ['end', 1],
  ]);
});

test('topWords orders by count, then alphabetically', () => {
  assert.deepEqual(topWords('b a c b A', 2), [
    ['a', 2],
    ['b', 2],
  ]);
});
