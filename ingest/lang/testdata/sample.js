// Package-level comment.
import fs from "fs";

/**
 * Adds numbers.
 */
function add(a, b) {
  return a + b;
}

export const mul = (a, b) => a * b;

const MAX = 3;

class Shape extends Base {
  // Area of it.
  area() {
    return compute(this.w);
  }

  static make() {
    return new Shape();
  }

  onClick = () => {
    this.area();
  };
}

export default class Circle {
  constructor(r) { this.r = r; }
}

function* gen() { yield 1; }

const Anon = class {
  run() {}
};
