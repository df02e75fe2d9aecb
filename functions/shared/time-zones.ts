/**
 * Wall clocks of IANA time zones, from the runtime's Intl data (no library): how far a zone is
 * ahead of UTC at an instant, and the instant a zone's wall-clock time stands for. Used by the
 * scheduler ("tomorrow at 9am ET") and the metrics' periods (days in the asker's zone).
 */
const clocks = new Map<string, Intl.DateTimeFormat>();

/** How far `zone`'s wall clock is ahead of UTC at `at` (ms since the epoch), in ms: whole minutes. */
export function zoneOffsetMs(at: number, zone: string): number {
  if (zone === 'UTC') return 0;
  let clock = clocks.get(zone);
  if (!clock) {
    clock = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    clocks.set(zone, clock);
  }
  const part = Object.fromEntries(clock.formatToParts(at).map((p) => [p.type, Number(p.value)]));
  const wall = Date.UTC(part.year ?? 0, (part.month ?? 1) - 1, part.day, part.hour, part.minute, part.second);
  return Math.round((wall - (at - (((at % 1000) + 1000) % 1000))) / 60_000) * 60_000;
}

/**
 * The instant (ms) whose wall-clock time in `zone` reads as `wall` (its fields taken as UTC's).
 * Near a change of offset the first guess's own offset may differ: the one at the answer is taken.
 */
export function instantIn(wall: number, zone: string): number {
  const guess = wall - zoneOffsetMs(wall, zone);
  return wall - zoneOffsetMs(guess, zone);
}
