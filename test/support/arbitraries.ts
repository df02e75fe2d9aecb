import fc from 'fast-check';

/**
 * Strings people and attackers send: any unicode, raw bytes, control characters, header injection,
 * path traversal, empty and very long ones. Shared by the property tests and `npm run fuzz`.
 */
export const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    '',
    ' ',
    '\r\n',
    'a@acme.test\r\nBcc: x@evil.com',
    '../../etc/passwd',
    '\u0000',
    '%00',
    '💌'.repeat(600),
  ),
);

/** Every order of these items (n! of them). */
export function* permutations<T>(items: T[]): Generator<T[]> {
  if (items.length <= 1) {
    yield items;
    return;
  }
  for (let i = 0; i < items.length; i++)
    for (const rest of permutations([...items.slice(0, i), ...items.slice(i + 1)]))
      yield [items[i] as T, ...rest];
}
