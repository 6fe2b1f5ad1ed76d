'use strict';

// Words are runs of letters, digits and apostrophes; everything else separates them.
function tokenize(text) {
  return text.split(/[^A-Za-z0-9']+/).filter((word) => word.length > 0);
}

// Map each word to how many times it occurs, ignoring case.
function countWords(text) {
  const counts = new Map();
  for (const word of tokenize(text)) {
    const key = word.toLowerCase();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

// The `limit` most frequent words as [word, count] pairs; ties keep alphabetical order.
function topWords(text, limit) {
  return [...countWords(text)]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit);
}

module.exports = { tokenize, countWords, topWords };
