export function encode(v: string): string {
  return v;
}

export class Store {
  put(v: string): string {
    return encode(v);
  }
}
