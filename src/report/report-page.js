// The report page's script (inlined by html.ts): tables and Chart.js charts from the report's JSON.
// Runs in the browser; `Chart` is the global of Chart.js's UMD bundle, inlined before it.
(function () {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const num = (v, digits = 3) => (v === null || v === undefined ? '–' : Number(v).toFixed(digits));
  const ci = (c) => (c ? `[${num(c.low)}, ${num(c.high)}]` : '–');

  function el(tag, text, attrs) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  function section(parent, title, note) {
    parent.appendChild(el('h2', title));
    if (note) parent.appendChild(el('p', note, { class: 'note' }));
  }
  function table(parent, head, rows, id) {
    const t = el('table', undefined, id ? { id } : {});
    const tr = el('tr');
    head.forEach((h) => tr.appendChild(el('th', h)));
    t.appendChild(tr);
    for (const r of rows) {
      const row = el('tr');
      r.forEach((c) => row.appendChild(c instanceof Node ? wrap(c) : el('td', c)));
      t.appendChild(row);
    }
    parent.appendChild(t);
  }
  function wrap(node) {
    const td = el('td');
    td.appendChild(node);
    return td;
  }

  // Shared with the statistics script (report-page-stats.js), which runs after this one.
  window.reportKit = { data, num, el, section, table };

  const t = data.totals;
  const summary = document.getElementById('summary');
  table(
    summary,
    ['', 'value'],
    [
      [
        data.oldSidecar ? 'keys with an old row (--rollouts and its sidecar) / main-output rows' : 'keys in --rollouts / main-output rows',
        `${t.oldRows} / ${t.newRows}`,
      ],
      ['rows with both verdicts', t.paired],
      ['main-output rows without an old reward', t.noOld],
      ['old keys not in the main output', t.oldOnly],
      ...(t.oldOnly > 0
        ? [
            [
              'of them, listed',
              t.missingKeys.join(', ') + (t.oldOnly > t.missingKeys.length ? `, and ${t.oldOnly - t.missingKeys.length} more` : ''),
            ],
          ]
        : []),
      ['flips 0→1 / 1→0 / changed', `${t.flips.up} / ${t.flips.down} / ${t.flips.changed}`],
      [`Cohen's κ on pass/fail (pass: reward ≥ ${data.passThreshold})`, num(t.kappa)],
      ...(data.noise
        ? [
            [
              `judge noise floor (--noise-sample, ${data.noise.n} rows judged twice): flip rate / κ / mean |Δreward|`,
              `${num(data.noise.flipRate)} / ${num(data.noise.kappa)} / ${num(data.noise.meanAbsDelta)}`,
            ],
          ]
        : []),
      ['history', data.historyUnavailable ? `unavailable: ${data.historyUnavailable}` : 'read from the Temporal server'],
    ],
    'summary-table',
  );

  const tables = document.getElementById('tables');
  section(
    tables,
    'Per agent',
    `Deltas are new − old over the rows with both verdicts; 95 % percentile bootstrap intervals (${data.bootstrap.resamples} resamples, seed ${data.bootstrap.seed}).`,
  );
  table(
    tables,
    [
      'agent',
      'rows',
      'paired',
      '0→1',
      '1→0',
      'changed',
      'mean old',
      'mean new',
      'Δ mean',
      '95 % CI',
      'pass old',
      'pass new',
      'Δ pass',
      '95 % CI',
      'κ',
    ],
    data.agents.map((a) => [
      a.agent,
      a.rows,
      a.paired,
      a.flips.up,
      a.flips.down,
      a.flips.changed,
      num(a.meanReward.old),
      num(a.meanReward.new),
      num(a.meanReward.delta),
      ci(a.meanReward.ci),
      num(a.passRate.old),
      num(a.passRate.new),
      num(a.passRate.delta),
      ci(a.passRate.ci),
      num(a.kappa),
    ]),
    'agents-table',
  );
  section(
    tables,
    'Key metrics',
    "New: the run's aggregate metrics file; old: computed from the old rewards where the metric has an old counterpart.",
  );
  table(
    tables,
    ['agent', 'metric', 'old', 'new', 'Δ'],
    data.agents.flatMap((a) => a.keyMetrics.map((m) => [a.agent, m.name, num(m.old, 4), num(m.new, 4), num(m.delta, 4)])),
  );

  section(tables, 'Judge failures and retries per round', data.timeline ? undefined : `History unavailable: ${data.historyUnavailable}`);
  if (data.timeline)
    table(
      tables,
      [
        'invocation',
        'round',
        'batches',
        'rows',
        'scored',
        'to sidecar',
        'judge failed',
        'rejected (4xx)',
        'not persisted',
        'activity retries',
        '429/503 retried',
      ],
      data.timeline.rounds.map((r) => [
        r.invocation,
        r.round,
        r.batches,
        r.rows,
        r.scored,
        r.failed,
        r.judgeFailed,
        r.rejected,
        r.notPersisted,
        r.activityRetries,
        r.throttled,
      ]),
    );
  if (data.timeline) {
    section(
      tables,
      'Throughput per invocation',
      'Each `reverify run` that wrote the output: the rows its batches answered over the time they ran (pauses, such as a Ctrl-C before a resume, are left out).',
    );
    table(
      tables,
      ['invocation', 'first batch started', 'active s', 'rows', 'rows/s'],
      data.timeline.invocations.map((v) => [v.invocation, v.started, num(v.activeSeconds, 1), v.rows, num(v.rowsPerSecond, 1)]),
    );
  }
  if (data.sidecarCounts)
    table(
      tables,
      ['failures sidecar: class', 'rows'],
      Object.entries(data.sidecarCounts.byClass).map(([k, v]) => [k, v]),
    );

  const tasksWithFlips = data.tasks.length + data.tasksMore;
  section(tables, 'Tasks with flips', tasksWithFlips > 50 ? `The first 50 of ${tasksWithFlips}.` : undefined);
  table(
    tables,
    ['task', 'agent', 'rows', '0→1', '1→0', 'changed'],
    data.tasks.slice(0, 50).map((x) => [x.task, x.agent, x.rows, x.up, x.down, x.changed]),
  );

  const shown = data.flipped.slice(0, 1000);
  const more = data.flipped.length - shown.length + data.flippedMore;
  section(
    tables,
    'Flipped rows',
    `${more > 0 ? `The first ${shown.length}; ${more} more in --json. ` : ''}Keys are _ng_task_index:_ng_rollout_index; \`reverify history -o OUT --key K\` lists a key's attempts.`,
  );
  table(
    tables,
    ['key', 'agent', 'old', 'new', 'flip'],
    shown.map((f) => [data.runUrl ? el('a', f.key, { href: `${data.runUrl}/history` }) : f.key, f.agent, f.old, f.new, f.kind]),
    'flipped-table',
  );

  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  const title = (text) => ({ title: { display: true, text } });
  new Chart(document.getElementById('chart-distribution'), {
    type: 'bar',
    data: {
      labels: data.distribution.labels,
      datasets: [
        { label: 'old', data: data.distribution.old },
        { label: 'new', data: data.distribution.new },
      ],
    },
    options: { plugins: title('Reward distribution, old vs new (rows with both)') },
  });
  new Chart(document.getElementById('chart-flips'), {
    type: 'bar',
    data: {
      labels: data.agents.map((a) => a.agent),
      datasets: [
        { label: '0→1', data: data.agents.map((a) => a.flips.up) },
        { label: '1→0', data: data.agents.map((a) => a.flips.down) },
        { label: 'changed', data: data.agents.map((a) => a.flips.changed) },
      ],
    },
    options: { plugins: title('Flips per agent'), scales: { x: { stacked: true }, y: { stacked: true } } },
  });
  const tl = data.timeline;
  const none = tl ? null : `history unavailable: ${data.historyUnavailable}`;
  new Chart(document.getElementById('chart-latency'), {
    type: 'bar',
    data: {
      labels: tl ? tl.latency.binMs.map((b) => `${b} ms`) : [],
      datasets: [{ label: 'answered /verify requests', data: tl ? tl.latency.counts : [] }],
    },
    options: { plugins: title(none || `Mean /verify latency per batch (overall mean ${num(tl.latency.meanMs, 1)} ms)`) },
  });
  new Chart(document.getElementById('chart-progress'), {
    type: 'line',
    data: {
      datasets: [
        { label: 'rows finished', data: tl ? tl.progress.map((p) => ({ x: p.t, y: p.rows })) : [], yAxisID: 'y' },
        { label: 'rows/s', data: tl ? tl.rate.map((p) => ({ x: p.t, y: p.rowsPerSecond })) : [], yAxisID: 'rate' },
      ],
    },
    options: {
      plugins: title(none || `Progress over active time (s of batches running since ${tl.start}; pauses left out)`),
      scales: {
        x: { type: 'linear', title: { display: true, text: 'active s' } },
        y: { position: 'left', beginAtZero: true, title: { display: true, text: 'rows finished' } },
        rate: { position: 'right', beginAtZero: true, title: { display: true, text: 'rows/s' }, grid: { drawOnChartArea: false } },
      },
    },
  });
})();
