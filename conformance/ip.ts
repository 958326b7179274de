/**
 * IP rules as docs/store-layout.md states them for a data plane: addresses and
 * CIDR ranges of either family; an IPv4-mapped IPv6 address (::ffff:a.b.c.d)
 * is the IPv4 address a.b.c.d, on the client side and in a rule alike.
 * Written for the reference reader only (no import from the service).
 */
import { isIP } from 'node:net';

export interface Address {
  family: 4 | 6;
  value: bigint;
}

function parseV4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function parseV6(text: string): bigint | null {
  let groups: string[];
  let tail: bigint | null = null;
  // An embedded IPv4 address in the last 32 bits.
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail = parseV4(text.slice(lastColon + 1));
    if (tail === null) return null;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  if (halves.length === 2) {
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = [...head, ...Array<string>(missing).fill('0'), ...rest];
  } else groups = head;
  if (groups.length !== 8) return null;
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  if (tail !== null) v = (v & ~0xffffffffn) | tail;
  return v;
}

/** An address in canonical form (mapped IPv6 becomes IPv4); null when not an address. */
export function parseAddress(text: string): Address | null {
  const bare = text.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) {
    const v = parseV4(bare);
    return v === null ? null : { family: 4, value: v };
  }
  if (family === 6) {
    const v = parseV6(bare);
    if (v === null) return null;
    if (v >> 32n === 0xffffn) return { family: 4, value: v & 0xffffffffn };
    return { family: 6, value: v };
  }
  return null;
}

export interface Range {
  family: 4 | 6;
  network: bigint;
  prefix: number;
}

/** One rule entry: an address (a /32 or /128) or CIDR range; host bits are ignored. Null when unparsable. */
export function parseRange(entry: string): Range | null {
  const [addrText, prefixText, ...extra] = entry.trim().split('/');
  if (extra.length > 0 || !addrText) return null;
  const bare = addrText.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return null;
  const bits = family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  let prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return null;
  let value = family === 4 ? parseV4(bare) : parseV6(bare);
  if (value === null) return null;
  if (family === 6 && value >> 32n === 0xffffn && prefix >= 96) {
    // ::ffff:10.0.0.0/104 is 10.0.0.0/8.
    return { family: 4, network: mask(value & 0xffffffffn, prefix - 96, 32), prefix: prefix - 96 };
  }
  if (family === 6 && prefixText === undefined && value >> 32n === 0xffffn) {
    value &= 0xffffffffn;
    prefix = 32;
    return { family: 4, network: value, prefix };
  }
  return { family: family as 4 | 6, network: mask(value, prefix, bits), prefix };
}

function mask(value: bigint, prefix: number, bits: number): bigint {
  const host = BigInt(bits - prefix);
  return (value >> host) << host;
}

export function inRange(addr: Address, range: Range): boolean {
  if (addr.family !== range.family) return false;
  return mask(addr.value, range.prefix, addr.family === 4 ? 32 : 128) === range.network;
}

/** A comma-separated rule list (empty: no rule); null when an entry is unparsable (the metadata is bad). */
export function parseList(list: string): Range[] | null {
  const out: Range[] = [];
  for (const entry of list.split(',').map((e) => e.trim()).filter(Boolean)) {
    const r = parseRange(entry);
    if (r === null) return null;
    out.push(r);
  }
  return out;
}
