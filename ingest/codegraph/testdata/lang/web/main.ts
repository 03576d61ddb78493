import { Store, encode } from './store';

export function run(): string {
  const s = new Store();
  return encode(s.put("x"));
}
