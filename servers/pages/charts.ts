/**
 * Charts of the pages, drawn on the server as SVG by Apache ECharts (server-side rendering mode:
 * `renderer: 'svg', ssr: true` renders to a string in Node without a DOM). No animation, no script:
 * the SVG is static markup inside the page, with a text alternative (`role="img"` and a label).
 */
import * as echarts from 'echarts';
import { type Html, html, raw } from './html.ts';

const palette = ['#0b5cad', '#a04c00', '#1f6f2b', '#7b3fa0', '#a11d1d', '#2d5d87', '#5b6470'];

function render(option: echarts.EChartsOption, width: number, height: number): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    chart.setOption({
      animation: false,
      color: palette,
      textStyle: { fontFamily: 'system-ui, sans-serif' },
      ...option,
    });
    // The only <style> ECharts writes holds :hover emphasis, meaningless in a static page (and
    // refused by the pages' CSP, which allows no inline style elements).
    return chart.renderToSVGString().replace(/<style[^>]*>[\s\S]*?<\/style>/g, '');
  } finally {
    chart.dispose();
  }
}

/** The SVG in a figure, labelled for assistive technology, with its caption. */
function figure(svg: string, label: string, caption: string): Html {
  const labelled = svg.replace(/^<svg /, `<svg role="img" aria-label="${label.replace(/[&<>"']/g, '')}" `);
  return html`<figure class="chart">${raw(labelled)}<figcaption class="muted">${caption}</figcaption></figure>`;
}

const tierColors: Array<[number, string]> = [
  [0.24, '#5b6470'],
  [0.49, '#a04c00'],
  [0.69, '#7a5d00'],
  [0.84, '#1f6f2b'],
  [1, '#0b5cad'],
];

/** The score gauge, 0-100, its band coloured by tier. */
export function scoreGauge(score: number, tierName: string): Html {
  const svg = render(
    {
      series: [
        {
          type: 'gauge',
          min: 0,
          max: 100,
          radius: '90%',
          axisLine: { lineStyle: { width: 18, color: tierColors } },
          pointer: { itemStyle: { color: '#12202f' } },
          axisTick: { show: false },
          splitLine: { length: 10, lineStyle: { color: '#fff', width: 2 } },
          axisLabel: { distance: 24, color: '#4a5a6a', fontSize: 11 },
          detail: {
            valueAnimation: false,
            formatter: '{value}',
            fontSize: 34,
            fontWeight: 700,
            color: '#12202f',
            offsetCenter: [0, '60%'],
          },
          title: { offsetCenter: [0, '88%'], fontSize: 14, color: '#12202f' },
          data: [{ value: score, name: tierName }],
        },
      ],
    },
    320,
    260,
  );
  return figure(
    svg,
    `Signal Strength ${score} of 100, tier ${tierName}`,
    `Signal Strength ${score}/100 (${tierName})`,
  );
}

export interface ComponentBar {
  name: string;
  score: number | null;
}

/** A horizontal bar per component, 0-100; components without data are shown as such. */
export function componentBars(components: readonly ComponentBar[]): Html {
  const names = components.map((c) => c.name);
  const svg = render(
    {
      grid: { left: 170, right: 40, top: 10, bottom: 30 },
      xAxis: { type: 'value', min: 0, max: 100, axisLabel: { color: '#4a5a6a' } },
      yAxis: { type: 'category', data: names, inverse: true, axisLabel: { color: '#12202f', fontSize: 12 } },
      series: [
        {
          type: 'bar',
          data: components.map((c) => c.score ?? 0),
          barWidth: 18,
          itemStyle: { color: '#0b5cad' },
          label: {
            show: true,
            position: 'right',
            color: '#12202f',
            formatter: (p: { dataIndex: number }) => {
              const value = components[p.dataIndex]?.score;
              return value === null || value === undefined ? 'no data' : String(value);
            },
          },
        },
      ],
    },
    640,
    40 + components.length * 36,
  );
  const label = components.map((c) => `${c.name} ${c.score === null ? 'no data' : c.score}`).join(', ');
  return figure(svg, `Component scores: ${label}`, 'The five components, each 0-100');
}

/** Traffic categories as the charts name them, agents first. */
export const trafficCategories = [
  'ai_user_agent',
  'ai_search',
  'ai_training',
  'browser_agent',
  'ai_referred',
  'human',
  'other_bot',
] as const;

export interface TrafficDay {
  day: string;
  by_category: Record<string, number>;
}

/** Events per day stacked by traffic category: agents next to people, over the period. */
export function trafficChart(days: readonly TrafficDay[], categories: readonly string[]): Html {
  const svg = render(
    {
      legend: { top: 0, textStyle: { color: '#12202f' } },
      grid: { left: 50, right: 20, top: 60, bottom: 40 },
      xAxis: { type: 'category', data: days.map((d) => d.day.slice(5)), axisLabel: { color: '#4a5a6a' } },
      yAxis: { type: 'value', minInterval: 1, axisLabel: { color: '#4a5a6a' } },
      series: categories.map((category) => ({
        type: 'bar',
        stack: 'events',
        name: category,
        data: days.map((d) => d.by_category[category] ?? 0),
      })),
    },
    680,
    320,
  );
  return figure(svg, `Events per day by category over ${days.length} days`, 'Events per day, by category');
}
