import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { niceMax } from './chart-scale.js';
import './charts.css';

/**
 * Charts drawn by the page as SVG, sized to their box in pixels (so labels keep their size on a
 * phone), no library: a line chart over time, and bars by a category. Colours come with a dash
 * pattern each, so a series is told apart without colour too; every chart has a text alternative
 * (its title and a description with the totals), and each period or bar a tooltip with its numbers.
 */

export interface Series {
  label: string;
  /** A stroke colour of the style sheet's palette. */
  color: string;
  /** An SVG dash pattern, '' for a solid line. */
  dash: string;
  values: number[];
}

const FONT = 12;

/** The width of the element, followed as it changes (a ResizeObserver). */
function useWidth(fallback: number): [RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    setWidth(element.clientWidth || fallback);
    const observer = new ResizeObserver(() => setWidth(element.clientWidth || fallback));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

const count = (n: number) => n.toLocaleString();

export function Legend({ series }: { series: readonly Pick<Series, 'label' | 'color' | 'dash'>[] }) {
  return (
    <ul class="chart-legend" aria-hidden="true">
      {series.map((s) => (
        <li key={s.label}>
          <svg width="28" height="10" aria-hidden="true" focusable="false">
            <line
              x1="1"
              y1="5"
              x2="27"
              y2="5"
              stroke={s.color}
              stroke-width="3"
              stroke-dasharray={s.dash || undefined}
            />
          </svg>
          {s.label}
        </li>
      ))}
    </ul>
  );
}

/** Values over periods, one line per series; `labelOf` words a period on the axis and in tooltips. */
export function LineChart({
  id,
  title,
  description,
  periods,
  series,
  labelOf,
}: {
  id: string;
  title: string;
  description: string;
  periods: readonly string[];
  series: readonly Series[];
  labelOf: (period: string, short: boolean) => string;
}) {
  const [box, width] = useWidth(640);
  const height = 240;
  const left = 44;
  const right = 12;
  const top = 10;
  const bottom = 28;
  const plotW = Math.max(10, width - left - right);
  const plotH = height - top - bottom;
  const top_ = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const n = periods.length;
  const x = (i: number) => left + (n <= 1 ? plotW / 2 : (i * plotW) / (n - 1));
  const y = (v: number) => top + plotH - (v / top_) * plotH;
  // About one label per 110 px, always the first and the last.
  const every = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(plotW / 110))));
  const ticks = periods.map((_, i) => i).filter((i) => i % every === 0 || i === n - 1);
  if (ticks.length > 1 && (ticks.at(-1) as number) - (ticks.at(-2) as number) < every / 2)
    ticks.splice(-2, 1);
  const slot = n <= 1 ? plotW : plotW / (n - 1);
  return (
    <figure class="chart">
      <div ref={box} class="chart-box">
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-labelledby={`${id}-title ${id}-desc`}
          data-chart={id}
        >
          <title id={`${id}-title`}>{title}</title>
          <desc id={`${id}-desc`}>{description}</desc>
          {[0, 0.5, 1].map((f) => (
            <g key={f} class="chart-grid">
              <line x1={left} x2={left + plotW} y1={y(top_ * f)} y2={y(top_ * f)} />
              {/* Counts are whole: a half-way line of a scale topped at 1 has no label. */}
              {Number.isInteger(top_ * f) && (
                <text x={left - 6} y={y(top_ * f) + FONT / 3} text-anchor="end" font-size={FONT}>
                  {count(top_ * f)}
                </text>
              )}
            </g>
          ))}
          {ticks.map((i) => (
            <text
              key={i}
              class="chart-axis"
              x={x(i)}
              y={height - 8}
              font-size={FONT}
              text-anchor={n > 1 && i === 0 ? 'start' : n > 1 && i === n - 1 ? 'end' : 'middle'}
            >
              {labelOf(periods[i] as string, true)}
            </text>
          ))}
          {series.map((s) => (
            <polyline
              key={s.label}
              class="chart-line"
              data-series={s.label}
              fill="none"
              stroke={s.color}
              stroke-width="2"
              stroke-dasharray={s.dash || undefined}
              stroke-linejoin="round"
              points={s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}
            />
          ))}
          {n <= 48 &&
            series.map((s) =>
              s.values.map((v, i) => (
                <circle key={`${s.label}-${i}`} cx={x(i)} cy={y(v)} r="2.5" fill={s.color} />
              )),
            )}
          {periods.map((period, i) => (
            <rect key={period} class="chart-hit" x={x(i) - slot / 2} y={top} width={slot} height={plotH}>
              <title>
                {`${labelOf(period, false)}: ${series.map((s) => `${count(s.values[i] ?? 0)} ${s.label.toLowerCase()}`).join(', ')}`}
              </title>
            </rect>
          ))}
        </svg>
      </div>
      <Legend series={series} />
    </figure>
  );
}

/** Bars by category (a domain…), one bar per series in each group, the biggest groups first. */
export function GroupedBars({
  id,
  title,
  description,
  groups,
  series,
}: {
  id: string;
  title: string;
  description: string;
  groups: readonly { name: string; values: number[] }[];
  series: readonly Pick<Series, 'label' | 'color' | 'dash'>[];
}) {
  const [box, width] = useWidth(640);
  const bar = 9;
  const gap = 3;
  const head = 20;
  const groupH = head + series.length * (bar + gap) + 10;
  const height = groups.length * groupH;
  const numbers = 56;
  const plotW = Math.max(10, width - numbers);
  const top_ = niceMax(Math.max(0, ...groups.flatMap((g) => g.values)));
  return (
    <figure class="chart">
      <div ref={box} class="chart-box">
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-labelledby={`${id}-title ${id}-desc`}
          data-chart={id}
        >
          <title id={`${id}-title`}>{title}</title>
          <desc id={`${id}-desc`}>{description}</desc>
          {groups.map((group, g) => (
            <g key={group.name} transform={`translate(0 ${g * groupH})`} data-group={group.name}>
              <text class="chart-label" x="0" y={FONT + 2} font-size={FONT + 1}>
                {group.name}
              </text>
              {series.map((s, i) => {
                const value = group.values[i] ?? 0;
                const w = Math.max(value > 0 ? 2 : 0, (value / top_) * plotW);
                const y = head + i * (bar + gap);
                return (
                  <g key={s.label}>
                    <rect x="0" y={y} width={w} height={bar} fill={s.color} rx="1">
                      <title>{`${group.name}: ${count(value)} ${s.label.toLowerCase()}`}</title>
                    </rect>
                    <text class="chart-axis" x={w + 4} y={y + bar - 1} font-size={FONT - 1}>
                      {count(value)}
                    </text>
                  </g>
                );
              })}
            </g>
          ))}
        </svg>
      </div>
      <Legend series={series} />
    </figure>
  );
}
