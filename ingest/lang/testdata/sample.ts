import { x } from "./x";

/** A shape. */
export interface Shape<T> {
  area(): number;
  name: string;
}

type Pair<K, V> = [K, V];

enum Color { Red, Green }

namespace Geo {
  export function dist(a: number): number {
    return Math.abs(a);
  }
}

@Component({ selector: "app" })
export class Circle<T> implements Shape<T> {
  private r: number = 1;

  @Input()
  area(): number {
    return 3.14 * this.r * this.r;
  }

  handler = (e: Event): void => {
    console.log(e);
  };
}

export abstract class Base {
  abstract size(): number;
}

export const identity = <T,>(v: T): T => v;

declare function ext(a: string): void;
