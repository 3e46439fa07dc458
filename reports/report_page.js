// The report page's own script: draws the charts from the JSON report embedded in the page and
// makes the winners table sortable. Compiled into mmtune at build time and inlined into every
// HTML report after Chart.js. Everything from the data reaches the page through Chart.js (which
// draws text on a canvas) or `textContent`, never through innerHTML, so strings from the DB
// cannot become markup. When done it writes what it drew into the DOM (`data-charts-ready`,
// `data-points` per chart) so a headless browser can check the page (tests/report_browser_test.sh).
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('report-data').textContent);
  const problems = Array.isArray(data.problems) ? data.problems : [];
  const machines = Array.isArray(data.machines) ? data.machines : [];
  const bench = data.bench && Array.isArray(data.bench.problems) ? data.bench : null;

  Chart.defaults.animation = false;  // a report is read, not watched; also keeps tests exact
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = 'system-ui, sans-serif';

  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                   '#7f7f7f', '#bcbd22', '#17becf'];
  const colour = (i) => palette[i % palette.length];

  const isNumber = (v) => typeof v === 'number' && isFinite(v);
  const fixed = (v, digits) => (isNumber(v) ? v.toFixed(digits) : 'n/a');

  // "128x768x768 f32 t1", with layout and transposes only when they are not the usual ones, and
  // the machine when the DB holds several.
  function problemLabel(p, fingerprint) {
    const q = p || {};
    let label = q.m + 'x' + q.n + 'x' + q.k + ' ' + q.dtype + ' t' + q.threads;
    if (q.layout !== 'row' || q.trans !== 'NN') label += ' ' + q.layout + ' ' + q.trans;
    if (machines.length > 1 && fingerprint) label += ' @' + String(fingerprint).slice(0, 6);
    return label;
  }

  function countPoints(chart) {
    let points = 0;
    for (const dataset of chart.data.datasets) {
      if (dataset.isCeiling) continue;  // ceilings are drawn from peaks, not measured points
      for (const value of dataset.data) {
        if (value === null || value === undefined) continue;
        if (typeof value === 'object' && !isNumber(value.y)) continue;
        points += 1;
      }
    }
    return points;
  }

  const drawn = {};
  function publish(id, chart) {
    const points = chart ? countPoints(chart) : 0;
    const series = chart ? chart.data.datasets.filter((d) => !d.isCeiling).length : 0;
    drawn[id] = points;
    const box = document.getElementById(id);
    box.setAttribute('data-points', String(points));
    box.setAttribute('data-series', String(series));
    box.classList.toggle('empty', points === 0);
  }

  // ---- (1) GFLOP/s per problem: tuned winner vs default, and the bench's rows when given. ----
  function drawSpeed() {
    const rows = problems.map((p) => ({label: problemLabel(p.problem, p.machine), key: p.key,
                                        machine: p.machine, tuned: p}));
    const datasets = [
      {label: 'tuned winner (confirm round)', data: rows.map((r) => r.tuned.gflops)},
      {label: 'analytical default (same round)', data: rows.map((r) => r.tuned.default_gflops)},
    ];
    if (bench) {
      const benchMachine = bench.context ? bench.context.mmtune_fingerprint : undefined;
      const byKey = new Map();
      for (const b of bench.problems) byKey.set(b.key, b);
      const impls = [];
      for (const b of bench.problems) {
        for (const r of b.results) if (!impls.includes(r.impl)) impls.push(r.impl);
      }
      // Bench rows join the tuned problem of the same key on the bench's machine.
      const joined = new Set();
      for (const row of rows) {
        if (benchMachine && row.machine !== benchMachine) continue;
        if (byKey.has(row.key)) {
          row.bench = byKey.get(row.key);
          joined.add(row.key);
        }
      }
      for (const b of bench.problems) {
        if (!joined.has(b.key)) rows.push({label: problemLabel(b.problem) + ' (bench only)',
                                           key: b.key, bench: b});
      }
      for (const series of datasets) {
        while (series.data.length < rows.length) series.data.push(null);
      }
      for (const impl of impls) {
        datasets.push({label: 'bench: ' + impl, data: rows.map((row) => {
          if (!row.bench) return null;
          const r = row.bench.results.find((x) => x.impl === impl);
          return r && isNumber(r.gflops) ? r.gflops : null;
        })});
      }
    }
    datasets.forEach((d, i) => { d.backgroundColor = colour(i); });
    const chart = new Chart(document.querySelector('#chart-speed canvas'), {
      type: 'bar',
      data: {labels: rows.map((r) => r.label), datasets: datasets},
      options: {
        scales: {y: {beginAtZero: true, title: {display: true, text: 'GFLOP/s'}}},
        plugins: {tooltip: {callbacks: {
          label: (item) => item.dataset.label + ': ' + fixed(item.parsed.y, 2) + ' GFLOP/s'}}},
      },
    });
    publish('chart-speed', chart);
  }

  // ---- (2) Roofline: intensity vs GFLOP/s on log axes, ceilings from the measured peaks. ----
  function drawRoofline() {
    const points = problems.filter((p) => p.roofline && isNumber(p.roofline.intensity) &&
                                          p.roofline.intensity > 0 && isNumber(p.gflops) &&
                                          p.gflops > 0)
        .map((p) => ({x: p.roofline.intensity, y: p.gflops, problem: p}));
    const intensities = points.map((p) => p.x);
    const lowest = intensities.length ? Math.min(...intensities) : 1;
    const highest = intensities.length ? Math.max(...intensities) : 10;
    const datasets = [];
    const ceilings = new Map();
    for (const p of problems) {
      const roof = p.roofline || {};
      if (!isNumber(roof.compute_gflops)) continue;
      const key = p.machine + '|' + roof.compute_gflops + '|' + roof.bandwidth_gbs;
      if (!ceilings.has(key)) {
        ceilings.set(key, {compute: roof.compute_gflops, bandwidth: roof.bandwidth_gbs,
                           name: p.problem.dtype + ' t' + p.problem.threads +
                                 (machines.length > 1 ? ' @' + String(p.machine).slice(0, 6) : '')});
      }
    }
    let index = 0;
    for (const c of ceilings.values()) {
      const line = [];
      if (isNumber(c.bandwidth) && c.bandwidth > 0) {
        const ridge = c.compute / c.bandwidth;
        const start = Math.min(lowest / 2, ridge / 4);
        line.push({x: start, y: start * c.bandwidth}, {x: ridge, y: c.compute},
                  {x: Math.max(highest * 2, ridge * 4), y: c.compute});
      } else {
        line.push({x: lowest / 2, y: c.compute}, {x: highest * 2, y: c.compute});
      }
      datasets.push({
        label: 'ceiling ' + c.name + ': ' + fixed(c.compute, 1) + ' GFLOP/s, ' +
               (isNumber(c.bandwidth) ? fixed(c.bandwidth, 1) + ' GB/s' : 'bandwidth unknown'),
        data: line, showLine: true, pointRadius: 0, borderDash: [6, 4], borderWidth: 2,
        borderColor: colour(index + 3), backgroundColor: colour(index + 3), isCeiling: true,
      });
      index += 1;
    }
    datasets.unshift({label: 'tuned winners', data: points, pointRadius: 5,
                      backgroundColor: colour(0), borderColor: colour(0)});
    const chart = new Chart(document.querySelector('#chart-roofline canvas'), {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        scales: {
          x: {type: 'logarithmic', title: {display: true,
                                          text: 'arithmetic intensity (flop per byte of A, B, C)'}},
          y: {type: 'logarithmic', title: {display: true, text: 'GFLOP/s'}},
        },
        plugins: {tooltip: {callbacks: {label: (item) => {
          const raw = item.raw || {};
          if (!raw.problem) return item.dataset.label;
          const p = raw.problem;
          return problemLabel(p.problem, p.machine) + ': ' + fixed(p.gflops, 2) + ' GFLOP/s, ' +
                 fixed(p.pct_of_roofline, 1) + '% of roofline';
        }}}},
      },
    });
    publish('chart-roofline', chart);
  }

  // ---- (3) Search convergence: best GFLOP/s so far per evaluation, per problem and session. ----
  function drawConvergence() {
    const datasets = [];
    for (const p of problems) {
      for (const search of (p.searches || [])) {
        const line = [];
        search.eval_index.forEach((x, i) => {
          const y = search.best_gflops[i];
          if (isNumber(y)) line.push({x: x, y: y});
        });
        const i = datasets.length;
        datasets.push({
          label: problemLabel(p.problem, p.machine) + ' · ' + (search.strategy || '?') +
                 ' (session ' + search.session_id + ')',
          data: line, showLine: true, pointRadius: 2, borderWidth: 2,
          borderColor: colour(i), backgroundColor: colour(i),
        });
      }
    }
    const chart = new Chart(document.querySelector('#chart-convergence canvas'), {
      type: 'scatter',
      data: {datasets: datasets},
      options: {
        scales: {
          x: {title: {display: true, text: 'evaluation (0 = analytical default)'},
              ticks: {precision: 0}},
          y: {title: {display: true, text: 'best GFLOP/s so far'}},
        },
      },
    });
    publish('chart-convergence', chart);
  }

  // ---- (4) Parameter landscape of one problem and kernel family. ----
  const axesOf = {packed: ['mc', 'kc'], direct: ['mr', 'nr'], gemv: ['mr', 'nr']};

  // Options: every (problem, family) with timed configs, the most timings first (packed first
  // among equals: its mc x kc plane is the one cache blocking shapes).
  function landscapeOptions() {
    const options = [];
    problems.forEach((p, index) => {
      const counts = {};
      for (const point of (p.landscape || [])) {
        const family = point.config && point.config.family;
        if (axesOf[family] && isNumber(point.gflops)) counts[family] = (counts[family] || 0) + 1;
      }
      for (const family of Object.keys(counts)) {
        options.push({index: index, family: family, count: counts[family]});
      }
    });
    options.sort((a, b) => b.count - a.count || (b.family === 'packed') - (a.family === 'packed'));
    return options;
  }

  // Light yellow (slow) to dark blue (fast): readable on white, monotone in lightness.
  function heat(t) {
    const stops = [[255, 237, 160], [65, 182, 196], [37, 52, 148]];
    const u = Math.max(0, Math.min(1, t)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(u));
    const f = u - i;
    const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
    return 'rgb(' + c[0] + ',' + c[1] + ',' + c[2] + ')';
  }

  let landscapeChart = null;
  function drawLandscape(option) {
    if (landscapeChart) landscapeChart.destroy();
    landscapeChart = null;
    const cells = new Map();
    let axes = ['x', 'y'];
    let title = 'no timed configs';
    if (option) {
      const p = problems[option.index];
      axes = axesOf[option.family];
      title = problemLabel(p.problem, p.machine) + ', ' + option.family + ' family';
      for (const point of p.landscape) {
        if (!point.config || point.config.family !== option.family || !isNumber(point.gflops)) {
          continue;
        }
        const x = point.config[axes[0]];
        const y = point.config[axes[1]];
        const key = x + ',' + y;
        const cell = cells.get(key) || {x: x, y: y, best: 0, configs: 0};
        cell.best = Math.max(cell.best, point.gflops);
        cell.configs += 1;
        cells.set(key, cell);
      }
    }
    const values = [...cells.values()];
    const best = values.reduce((m, c) => Math.max(m, c.best), 0);
    const worst = values.reduce((m, c) => Math.min(m, c.best), best);
    const span = best - worst || 1;
    const points = values.map((c) => ({x: c.x, y: c.y, r: 6 + 10 * (c.best - worst) / span,
                                       best: c.best, configs: c.configs}));
    landscapeChart = new Chart(document.querySelector('#chart-landscape canvas'), {
      type: 'bubble',
      data: {datasets: [{
        label: title, data: points,
        backgroundColor: (ctx) => heat(((ctx.raw && ctx.raw.best) - worst) / span),
        borderColor: 'rgba(0,0,0,0.35)',
      }]},
      options: {
        scales: {x: {title: {display: true, text: axes[0]}},
                 y: {title: {display: true, text: axes[1]}}},
        plugins: {tooltip: {callbacks: {label: (item) => {
          const raw = item.raw;
          return axes[0] + '=' + raw.x + ', ' + axes[1] + '=' + raw.y + ': best ' +
                 fixed(raw.best, 2) + ' GFLOP/s of ' + raw.configs + ' config(s)';
        }}}},
      },
    });
    document.getElementById('landscape-low').textContent = fixed(worst, 1) + ' GFLOP/s';
    document.getElementById('landscape-high').textContent = fixed(best, 1) + ' GFLOP/s';
    publish('chart-landscape', landscapeChart);
  }

  function setUpLandscape() {
    const options = landscapeOptions();
    const select = document.getElementById('landscape-select');
    options.forEach((o, i) => {
      const p = problems[o.index];
      const axes = axesOf[o.family];
      select.add(new Option(problemLabel(p.problem, p.machine) + ' — ' + o.family + ' (' +
                            axes[0] + ' × ' + axes[1] + ', ' + o.count + ' timings)', String(i)));
    });
    select.disabled = options.length < 2;
    select.addEventListener('change', () => drawLandscape(options[Number(select.value)]));
    drawLandscape(options[0]);
  }

  // ---- (5) The winners table: click a column heading to sort by it. ----
  function makeSortable(table) {
    const headings = [...table.querySelectorAll('thead th')];
    const body = table.tBodies[0];
    headings.forEach((th, column) => {
      th.tabIndex = 0;
      const sort = () => {
        const ascending = th.getAttribute('aria-sort') !== 'ascending';
        headings.forEach((other) => other.removeAttribute('aria-sort'));
        th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
        const numeric = th.dataset.type === 'number';
        const value = (row) => {
          const text = row.cells[column].dataset.value ?? row.cells[column].textContent;
          if (!numeric) return text;
          const number = parseFloat(text);
          return isNaN(number) ? -Infinity : number;
        };
        const rows = [...body.rows];
        rows.sort((a, b) => {
          const x = value(a);
          const y = value(b);
          const order = numeric ? x - y : String(x).localeCompare(String(y));
          return ascending ? order : -order;
        });
        for (const row of rows) body.appendChild(row);
      };
      th.addEventListener('click', sort);
      th.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          sort();
        }
      });
    });
    table.setAttribute('data-sortable', 'ready');
  }

  document.getElementById('chartjs-version').textContent = Chart.version;
  drawSpeed();
  drawRoofline();
  drawConvergence();
  setUpLandscape();
  makeSortable(document.getElementById('winners-table'));

  const ids = Object.keys(drawn);
  document.body.setAttribute('data-charts-total', String(ids.length));
  document.body.setAttribute('data-charts-ready',
                             String(ids.filter((id) => drawn[id] > 0).length));
})();
