/**
 * Time-series charts with uPlot (canvas): hover values in the legend, a click
 * on a legend entry toggles its series, a click on the plot reports the
 * bucket and the nearest series (drill-down to logs), and configuration
 * changes from the audit trail drawn as vertical markers.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';
import { short } from './format';

export interface Series {
  name: string;
  data: (number | null)[];
  /** Drawn against a second axis on the right (a figure of another size, e.g. tokens beside requests). */
  right?: boolean;
}

export interface Marker {
  t: number;
  label: string;
}

const palette = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#ec4899', '#14b8a6', '#84cc16', '#f97316', '#6366f1'];

export function TimeChart({ x, series, markers = [], onPoint, height = 260, label, stepped, range, unit = '', format = short }: {
  x: number[];
  /** The window shown (Unix seconds), whatever buckets have data: one point or a change after the last bucket still fits. */
  range?: [number, number];
  series: Series[];
  markers?: Marker[];
  onPoint?: (bucketStart: number, seriesName: string, index: number) => void;
  height?: number;
  label: string;
  stepped?: boolean;
  /** Appended to the axis values and hover values ('%'). */
  unit?: string;
  /** How axis and hover values read (money has its own form). */
  format?: (v: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const cb = useRef({ onPoint, markers });
  cb.current = { onPoint, markers };

  useEffect(() => {
    const el = box.current!;
    const css = getComputedStyle(document.documentElement);
    const ink = css.getPropertyValue('--muted').trim() || '#888';
    const grid = css.getPropertyValue('--grid').trim() || 'rgba(128,128,128,.2)';
    const axis = { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const fmt = (v: number | null) => (v === null ? '–' : format(v) + unit);
    const right = series.find((s) => s.right);
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth),
      height,
      cursor: { focus: { prox: 30 } },
      focus: { alpha: 0.4 },
      scales: { x: range ? { time: true, range: () => range } : { time: true } },
      axes: [
        axis,
        { ...axis, size: 60, values: (_u, vals) => vals.map(fmt) },
        ...(right ? [{ ...axis, scale: 'right', side: 1, size: 60, grid: { show: false }, label: right.name, values: (_u: uPlot, vals: number[]) => vals.map(fmt) }] : []),
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.name,
          stroke: s.name === 'other' ? '#9ca3af' : palette[i % palette.length],
          width: 1.5,
          ...(s.right ? { scale: 'right' } : {}),
          // Few buckets, or gaps between them: show the points, large enough to see a lone one.
          points: { show: x.length < 80 || s.data.some((v) => v === null), size: 7 },
          value: (_u: uPlot, v: number | null) => fmt(v),
          ...(stepped ? { paths: uPlot.paths.stepped!({ align: 1 }) } : {}),
        })),
      ],
      hooks: {
        draw: [
          (u) => {
            const ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = '#e11d48';
            ctx.setLineDash([4, 4]);
            ctx.lineWidth = 1;
            for (const m of cb.current.markers) {
              const px = Math.round(u.valToPos(m.t, 'x', true));
              if (px < u.bbox.left || px > u.bbox.left + u.bbox.width) continue;
              ctx.beginPath();
              ctx.moveTo(px, u.bbox.top);
              ctx.lineTo(px, u.bbox.top + u.bbox.height);
              ctx.stroke();
            }
            ctx.restore();
          },
        ],
      },
    };
    const u = new uPlot(opts, [x, ...series.map((s) => s.data)] as uPlot.AlignedData, el);
    plot.current = u;
    // A press and release in one place is a click on a point (not a drag). Not the 'click' event: the browser
    // leaves it out when the element pressed changed under the pointer meanwhile (uPlot redraws its cursor).
    let down: [number, number] | null = null;
    u.over.addEventListener('mousedown', (e) => (down = e.button === 0 ? [e.clientX, e.clientY] : null));
    u.over.addEventListener('mouseup', (e) => {
      const pressed = down;
      down = null;
      if (!pressed || Math.abs(pressed[0] - e.clientX) > 4 || Math.abs(pressed[1] - e.clientY) > 4) return;
      const idx = u.cursor.idx;
      const top = u.cursor.top ?? 0;
      if (idx === null || idx === undefined || !cb.current.onPoint) return;
      let best = -1;
      let bestDist = Infinity;
      series.forEach((s, i) => {
        if (!u.series[i + 1]!.show) return;
        const v = s.data[idx];
        if (v === null || v === undefined) return;
        const d = Math.abs(u.valToPos(v, s.right ? 'right' : 'y') - top);
        if (d < bestDist) (bestDist = d), (best = i);
      });
      if (best >= 0) cb.current.onPoint(x[idx]!, series[best]!.name, idx);
    });
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(300, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [x, series, height, stepped, unit, format, range?.[0], range?.[1]]);

  useEffect(() => plot.current?.redraw(false), [markers]);

  return <div class={`chart ${onPoint ? 'clickable-chart' : ''}`} ref={box} role="img" aria-label={label} data-range={range?.join(',')} />;
}
