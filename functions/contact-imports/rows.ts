import type { PropertyValue } from '../contacts/contact.js';
import { isValidEmail } from '../shared/address.js';
import type { ColumnMap, PropertyColumn } from './model.js';

/**
 * One CSV row as a contact: which column holds what (resolved against the file's header once),
 * and each row's fields, or the reason it fails. Pure: the worker (run.ts) decides what to write.
 */

export interface Columns {
  readonly email: number;
  readonly first_name?: number;
  readonly last_name?: number;
  readonly unsubscribed?: number;
  readonly properties: readonly (PropertyColumn & { index: number })[];
}

/** A row as a contact's fields: only what the row gives (an empty cell sets nothing). */
export interface RowContact {
  readonly email: string;
  readonly first_name?: string;
  readonly last_name?: string;
  readonly unsubscribed?: boolean;
  /** By property id. */
  readonly props: Readonly<Record<string, PropertyValue>>;
}

const find = (header: readonly string[], name: string): number =>
  header.findIndex((h) => h.trim().toLowerCase() === name.trim().toLowerCase());

/**
 * The header's columns for each field: the column_map's names (compared without case or
 * surrounding spaces), or, without one, the header's own `email`, `first_name`, `last_name`,
 * `unsubscribed`. A mapped column the header lacks, or no email column, is the import's failure.
 */
export function resolveColumns(
  header: readonly string[],
  map: ColumnMap | null,
  properties: readonly PropertyColumn[],
): Columns | { error: string } {
  const named = (field: keyof ColumnMap): number | undefined | { error: string } => {
    const name = map?.[field];
    if (name === undefined) {
      const index = find(header, field);
      return index < 0 ? undefined : index;
    }
    const index = find(header, name);
    return index < 0 ? { error: `column_map.${field}: the file has no column "${name}"` } : index;
  };
  const fields = {
    email: named('email'),
    first_name: named('first_name'),
    last_name: named('last_name'),
    unsubscribed: named('unsubscribed'),
  };
  for (const value of Object.values(fields)) if (typeof value === 'object') return value;
  if (fields.email === undefined)
    return { error: 'The file has no email column: name one in column_map.email.' };
  const props: (PropertyColumn & { index: number })[] = [];
  for (const property of properties) {
    const index = find(header, property.column);
    if (index < 0)
      return { error: `column_map.properties.${property.key}: the file has no column "${property.column}"` };
    props.push({ ...property, index });
  }
  return {
    email: fields.email as number,
    first_name: fields.first_name as number | undefined,
    last_name: fields.last_name as number | undefined,
    unsubscribed: fields.unsubscribed as number | undefined,
    properties: props,
  };
}

const TRUE = new Set(['true', 'yes', '1', 'y', 't']);
const FALSE = new Set(['false', 'no', '0', 'n', 'f']);
const MAX_NAME = 256;
const MAX_VALUE = 2048;

/** A row's contact, or why it fails (the reason names the column). */
export function rowContact(record: readonly string[], columns: Columns): RowContact | { reason: string } {
  const cell = (index: number | undefined): string | undefined => {
    if (index === undefined) return undefined;
    const value = record[index]?.trim();
    return value ? value : undefined;
  };
  const email = cell(columns.email);
  if (!email) return { reason: 'email: missing' };
  if (!isValidEmail(email)) return { reason: `email: "${email.slice(0, 300)}" is not an email address` };
  const first_name = cell(columns.first_name);
  const last_name = cell(columns.last_name);
  for (const [field, value] of [
    ['first_name', first_name],
    ['last_name', last_name],
  ] as const)
    if (value && value.length > MAX_NAME) return { reason: `${field}: longer than ${MAX_NAME} characters` };
  const flag = cell(columns.unsubscribed)?.toLowerCase();
  let unsubscribed: boolean | undefined;
  if (flag !== undefined) {
    if (TRUE.has(flag)) unsubscribed = true;
    else if (FALSE.has(flag)) unsubscribed = false;
    else return { reason: `unsubscribed: "${flag.slice(0, 50)}" is not true or false` };
  }
  const props: Record<string, PropertyValue> = {};
  for (const property of columns.properties) {
    const value = cell(property.index);
    if (value === undefined) continue;
    if (property.type === 'number') {
      const number = Number(value);
      if (!Number.isFinite(number))
        return { reason: `properties.${property.key}: "${value.slice(0, 50)}" is not a number` };
      props[property.property_id] = number;
    } else {
      if (value.length > MAX_VALUE)
        return { reason: `properties.${property.key}: longer than ${MAX_VALUE} characters` };
      props[property.property_id] = value;
    }
  }
  return {
    email,
    ...(first_name === undefined ? {} : { first_name }),
    ...(last_name === undefined ? {} : { last_name }),
    ...(unsubscribed === undefined ? {} : { unsubscribed }),
    props,
  };
}
