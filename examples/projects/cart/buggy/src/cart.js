'use strict';

// Prices are in cents. A discount is a percentage taken off the subtotal, rounded to the
// nearest cent.
function subtotal(lines) {
  return lines.reduce((sum, line) => sum + line.price * line.quantity, 0);
}

function total(lines, discountPercent = 0) {
  const before = subtotal(lines);
  return before - Math.round(discountPercent / 100);
}

module.exports = { subtotal, total };
