// The report page's statistics (inlined by html.ts after report-page.js, whose helpers it uses):
// paired differences clustered by task, the clustered McNemar test, the tasks that flipped, and
// the live estimate replayed in the plan order, as a chart.
(function () {
  const { data, num, el, section, table } = window.reportKit;
  const p = data.paired;
  const level = `${Math.round(p.confidence * 1000) / 10} %`;
  const signed = (v) => (v === null || v === undefined ? '–' : `${v >= 0 ? '+' : ''}${num(v, 4)}`);
  const iv = (c) => (c ? `[${signed(c.lo)}, ${signed(c.hi)}]` : '–');
  const boot = (c) => (c ? `[${signed(c.low)}, ${signed(c.high)}]` : '–');
  const pValue = (v) => (v === null ? '–' : v < 1e-4 ? v.toExponential(1) : num(v, 4));

  const root = document.getElementById('statistics');
  section(
    root,
    'Paired differences, clustered by task',
    `New − old on the same rows (Miller 2024, arXiv 2411.00640): the mean of the per-row differences, its standard error clustered by task ` +
      `(the rollouts of a task are not independent; over all agents a task's rows under every agent are one cluster) and the unclustered one, ` +
      `and the ${level} interval Δ ± z·SE, beside the percentile bootstrap of each agent's rows. Fixed-sample intervals: they say how the change ` +
      `would generalise to other tasks, for one look at the end. McNemar: Durkalski's clustered test of the pass/fail flips (pass: reward ≥ ` +
      `${data.passThreshold}), X² on 1 degree of freedom; p small: the flips lean one way more than chance would.`,
  );
  const boots = Object.fromEntries(data.agents.map((a) => [a.agent, a]));
  const rows = [...p.agents, p.all].map((s) => {
    const b = boots[s.agent];
    return [
      s.agent === 'all' ? 'all agents' : s.agent,
      s.rows,
      s.tasks,
      num(s.oldMean, 4),
      num(s.newMean, 4),
      signed(s.delta && s.delta.mean),
      num(s.delta && s.delta.se, 4),
      num(s.delta && s.delta.seIndependent, 4),
      iv(s.delta),
      b ? boot(b.meanReward.ci) : '–',
      signed(s.passDelta && s.passDelta.mean),
      iv(s.passDelta),
      `${s.mcnemar.fp} / ${s.mcnemar.pf}`,
      num(s.mcnemar.statistic, 3),
      pValue(s.mcnemar.pValue),
    ];
  });
  table(
    root,
    [
      'agent',
      'paired rows',
      'tasks',
      'mean old',
      'mean new',
      'Δ mean',
      'SE (clustered)',
      'SE (rows independent)',
      `${level} CI (clustered)`,
      '95 % CI (bootstrap)',
      'Δ pass rate',
      `${level} CI (clustered)`,
      'flips 0→1 / 1→0',
      'McNemar X²',
      'p',
    ],
    rows,
    'paired-table',
  );

  section(
    root,
    'Tasks that flipped',
    'Per task and agent: rows of the task that went fail → pass (0→1) or pass → fail (1→0). Click to open.',
  );
  const more =
    data.tasksMore > 0 ? ` (of the ${data.tasks.length} tasks with flips listed; ${data.tasksMore} more in --json's counts)` : '';
  for (const [kind, label, id] of [
    ['up', '0→1', 'tasks-up'],
    ['down', '1→0', 'tasks-down'],
  ]) {
    const list = data.tasks.filter((x) => x[kind] > 0);
    const box = el('details', undefined, { id });
    box.appendChild(el('summary', `${list.length} task(s) with rows flipped ${label}${more}`));
    table(
      box,
      ['task', 'agent', 'rows', label],
      list.map((x) => [x.task, x.agent, x.rows, x[kind]]),
    );
    root.appendChild(box);
  }

  const h = data.estimateHistory;
  const order = !h
    ? ''
    : h.order.kind === 'random'
      ? `the run's random order (seed ${h.order.seed})`
      : data.historyUnavailable
        ? "file order (the run's order is unknown: its history is unavailable)"
        : 'file order (no validity guarantee: the first tasks of a file are often not like the rest)';
  section(
    root,
    'The live estimate over the run',
    h
      ? `The chart "Live Δ mean reward" replays the live estimate (a confidence sequence for sampling without replacement, Waudby-Smith & Ramdas 2020, ` +
          `predictable-mixture empirical Bernstein; docs/statistics.md) at ${Math.round(h.confidence * 1000) / 10} % over the ${h.rows} paired rows ` +
          `(${h.units} agent × task units) in ${order}, in ${h.points.length} steps: every interval holds at once with that probability, and the last ` +
          `is the exact value. Each step shows what the live view showed at that point had every row its final verdict (rows then in flight or ` +
          `failed were held at their worst case: wider).`
      : 'No paired rows: nothing to replay.',
  );
  if (h) {
    const last = h.points[h.points.length - 1];
    table(
      root,
      ['rows in', 'units in', 'Δ all agents', `${Math.round(h.confidence * 1000) / 10} % interval`],
      h.points
        .filter((_, i) => i === h.points.length - 1 || i % Math.ceil(h.points.length / 10) === 0)
        .map((pt) => [pt.rows, pt.units, signed(pt.all && pt.all.estimate), iv(pt.all)]),
      'estimate-history-table',
    );
    if (last && last.all)
      root.appendChild(el('p', `Final: Δ ${signed(last.all.estimate)} (exact over the replayed rows).`, { class: 'note' }));
  }

  const series = (pick, label, color, fill) => ({
    label,
    data: h ? h.points.filter((pt) => pt.all).map((pt) => ({ x: pt.rows, y: pick(pt.all) })) : [],
    borderColor: color,
    backgroundColor: 'rgba(54, 162, 235, 0.15)',
    pointRadius: 0,
    fill,
  });
  new Chart(document.getElementById('chart-estimate'), {
    type: 'line',
    data: {
      datasets: [
        series((v) => v.hi, 'upper bound', 'rgba(54, 162, 235, 0.6)', false),
        series((v) => v.lo, 'lower bound', 'rgba(54, 162, 235, 0.6)', '-1'),
        series((v) => v.estimate, 'Δ (tasks so far)', 'rgb(220, 80, 60)', false),
      ],
    },
    options: {
      plugins: {
        title: {
          display: true,
          text: h ? `Live Δ mean reward, all agents, ${Math.round(h.confidence * 1000) / 10} % confidence sequence` : 'No paired rows',
        },
      },
      scales: {
        x: { type: 'linear', title: { display: true, text: 'rows in (plan order)' } },
        y: { title: { display: true, text: 'Δ mean reward (new − old)' } },
      },
    },
  });
})();
