import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// Static checks of docker-compose.yml / Dockerfile / .dockerignore against the compose-spec rules
// that matter here. No Docker engine or compose client runs on the project's machines, so the
// file is validated by parsing it; `docker compose config` is for users' machines.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');

type Service = {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  ports?: unknown[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  environment?: string[] | Record<string, string | number | boolean | null>;
  volumes?: Array<string | { type?: string; source?: string; target?: string }>;
  configs?: Array<string | { source: string; target?: string }>;
  command?: string | string[];
  container_name?: string;
  profiles?: string[];
  [k: string]: unknown;
};
type Compose = {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  configs?: Record<string, unknown>;
  networks?: Record<string, unknown>;
  [k: string]: unknown;
};

const compose = parse(readFileSync(COMPOSE_FILE, 'utf8')) as Compose;
const services = Object.entries(compose.services);

/** `${VAR:-default}` / `${VAR-default}` -> default; `${VAR}` -> '' (what compose does when unset). */
function interpolateDefaults(s: string): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g, (_m, _name, def?: string) => def ?? '');
}

function envOf(svc: Service): Record<string, string> {
  const env = svc.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((e) => {
        const i = e.indexOf('=');
        return i < 0 ? [e, ''] : [e.slice(0, i), e.slice(i + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

function dependsOn(svc: Service): Array<[string, string | undefined]> {
  const d = svc.depends_on;
  if (d === undefined) return [];
  if (Array.isArray(d)) return d.map((n) => [n, undefined]);
  return Object.entries(d).map(([n, v]) => [n, v?.condition]);
}

/** Dockerfile instructions, with line continuations joined. */
function dockerfileInstructions(path: string): Array<{ op: string; args: string }> {
  const joined = readFileSync(path, 'utf8').replace(/\\\r?\n/g, ' ');
  return joined
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\S+)\s*(.*)$/.exec(l)!;
      return { op: m[1].toUpperCase(), args: m[2] };
    });
}

describe('docker-compose.yml', () => {
  it('uses only compose-spec top-level keys and no obsolete `version:`', () => {
    const allowed = new Set(['name', 'services', 'networks', 'volumes', 'configs', 'secrets', 'include', 'models']);
    for (const key of Object.keys(compose)) {
      expect(allowed.has(key) || key.startsWith('x-'), `top-level key '${key}'`).toBe(true);
    }
    expect(compose).not.toHaveProperty('version');
    expect(compose.name).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
  });

  it('every service has an image or a build, and images are pinned (no latest)', () => {
    for (const [name, svc] of services) {
      expect(svc.image !== undefined || svc.build !== undefined, `service ${name}`).toBe(true);
      if (svc.image !== undefined && svc.build === undefined) {
        const image = interpolateDefaults(svc.image);
        const tag = /:([^/:]+)$/.exec(image)?.[1];
        expect(tag, `service ${name} image ${svc.image} has a tag`).toBeTruthy();
        expect(tag, `service ${name} image ${svc.image}`).not.toBe('latest');
      }
    }
  });

  it('ports are quoted strings in a valid short syntax', () => {
    const portRe = /^(?:(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]):)?(\d+)(?:-(\d+))?(?::(\d+)(?:-(\d+))?)?(?:\/(?:tcp|udp))?$/;
    for (const [name, svc] of services) {
      for (const p of svc.ports ?? []) {
        // Unquoted `80:80` is a base-60 number in YAML 1.1 parsers: compose requires strings.
        expect(typeof p, `service ${name} port ${String(p)}`).toBe('string');
        const m = portRe.exec(p as string);
        expect(m, `service ${name} port ${String(p)}`).not.toBeNull();
        for (const n of m!.slice(1).filter((x) => x !== undefined)) {
          expect(Number(n)).toBeGreaterThan(0);
          expect(Number(n)).toBeLessThanOrEqual(65535);
        }
      }
    }
  });

  it('depends_on targets exist, with valid conditions, and no cycles', () => {
    const conditions = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);
    for (const [name, svc] of services) {
      for (const [target, condition] of dependsOn(svc)) {
        expect(compose.services[target], `${name} depends on '${target}'`).toBeDefined();
        if (condition !== undefined) expect(conditions.has(condition), `${name} -> ${target}: ${condition}`).toBe(true);
        if (condition === 'service_healthy') {
          expect(compose.services[target].healthcheck, `${target} needs a healthcheck`).toBeDefined();
        }
      }
    }
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (n: string): void => {
      if (done.has(n)) return;
      expect(visiting.has(n), `dependency cycle through ${n}`).toBe(false);
      visiting.add(n);
      for (const [t] of dependsOn(compose.services[n])) visit(t);
      visiting.delete(n);
      done.add(n);
    };
    for (const [name] of services) visit(name);
  });

  it('named volumes and configs used by services are declared at the top level', () => {
    for (const [name, svc] of services) {
      for (const v of svc.volumes ?? []) {
        if (typeof v === 'string') {
          const source = v.split(':')[0];
          const isPath = source.startsWith('.') || source.startsWith('/') || source.startsWith('~') || source.startsWith('$');
          if (v.includes(':') && !isPath) {
            expect(compose.volumes ?? {}, `service ${name} volume ${source}`).toHaveProperty(source);
          }
        } else if (v.type === 'volume' && v.source !== undefined) {
          expect(compose.volumes ?? {}, `service ${name} volume ${v.source}`).toHaveProperty(v.source);
        } else {
          expect(['bind', 'volume', 'tmpfs', 'npipe', 'cluster', 'image']).toContain(v.type);
          expect(v.target, `service ${name} volume target`).toBeTruthy();
        }
      }
      for (const c of svc.configs ?? []) {
        const source = typeof c === 'string' ? c : c.source;
        expect(compose.configs ?? {}, `service ${name} config ${source}`).toHaveProperty(source);
      }
    }
    expect(compose.volumes).toHaveProperty('postgresql-data');
  });

  it('runs Temporal on PostgreSQL with the schema set up first, and the Web UI on 8080', () => {
    const pg = compose.services.postgresql;
    expect(pg.image).toMatch(/^postgres:16/);
    const temporal = compose.services.temporal;
    expect(temporal.image).toMatch(/^temporalio\/server:/);
    expect(envOf(temporal)).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql', BIND_ON_IP: '0.0.0.0' });
    expect(temporal.ports).toContain('7233:7233');
    expect(dependsOn(temporal)).toContainEqual(['temporal-admin-tools', 'service_completed_successfully']);
    expect(compose.services['temporal-admin-tools'].image).toMatch(/^temporalio\/admin-tools:/);
    const ui = compose.services['temporal-ui'];
    expect(ui.image).toMatch(/^temporalio\/ui:/);
    expect(ui.ports).toContain('8080:8080');
    expect(envOf(ui).TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('the worker is built from the project, talks to temporal:7233, is scalable, and sees ./data', () => {
    const worker = compose.services.worker;
    expect(worker.build).toBeDefined();
    const build = typeof worker.build === 'string' ? { context: worker.build } : worker.build!;
    const context = resolve(ROOT, build.context ?? '.');
    expect(existsSync(join(context, build.dockerfile ?? 'Dockerfile'))).toBe(true);

    const env = envOf(worker);
    const [host, port] = env.TEMPORAL_ADDRESS.split(':');
    expect(compose.services[host], `TEMPORAL_ADDRESS host '${host}' is a service`).toBeDefined();
    expect(port).toBe('7233');
    expect(compose.services[host].ports?.some((p) => String(p).endsWith(':7233'))).toBe(true);

    expect(worker.command).toEqual(['worker']);
    // Replicas: no fixed name, no host port.
    expect(worker.container_name).toBeUndefined();
    expect(worker.ports).toBeUndefined();
    expect(dependsOn(worker).map(([t]) => t)).toContain('temporal-create-namespace');

    const data = (worker.volumes ?? []).find((v) => typeof v !== 'string' && v.type === 'bind') as
      { source: string; target: string } | undefined;
    expect(data, 'a bind mount for the shared data directory').toBeDefined();
    expect(interpolateDefaults(data!.source)).toBe('./data');
    expect(interpolateDefaults(data!.target)).toBe('/data');
  });
});

describe('Dockerfile', () => {
  const dockerfile = dockerfileInstructions(join(ROOT, 'Dockerfile'));

  it('is based on node:20-bookworm-slim (glibc, not Alpine)', () => {
    const froms = dockerfile.filter((i) => i.op === 'FROM').map((i) => i.args.split(/\s+/)[0]);
    expect(froms.at(-1)).toBe('node:20-bookworm-slim');
  });

  it('skips the temporal CLI download during npm ci (TEMPORAL_CLI_PATH is honoured by the install script)', () => {
    const install = dockerfile.find((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args));
    expect(install?.args).toMatch(/TEMPORAL_CLI_PATH=\S+\s+npm ci/);
    expect(readFileSync(join(ROOT, 'scripts', 'install-temporal.mjs'), 'utf8')).toContain('process.env.TEMPORAL_CLI_PATH');
    // The script must be in the image before npm ci runs it.
    const copies = dockerfile.filter((i) => i.op === 'COPY');
    const installIndex = dockerfile.indexOf(install!);
    expect(copies.some((c) => c.args.includes('scripts/install-temporal.mjs') && dockerfile.indexOf(c) < installIndex)).toBe(true);
  });

  it('ENTRYPOINT/CMD run `node bin/reverify.js worker`, and that file exists and is copied', () => {
    const exec = (op: string): string[] | undefined => {
      const i = dockerfile.filter((x) => x.op === op).at(-1);
      return i === undefined ? undefined : (JSON.parse(i.args) as string[]);
    };
    const command = [...(exec('ENTRYPOINT') ?? []), ...(exec('CMD') ?? [])];
    expect(command).toEqual(['node', 'bin/reverify.js', 'worker']);
    expect(existsSync(join(ROOT, command[1]))).toBe(true);
    const copied = dockerfile.filter((i) => i.op === 'COPY').map((i) => i.args.split(/\s+/)[0]);
    for (const dir of ['bin', 'src', 'workflows', 'activities']) expect(copied).toContain(dir);
  });

  it("installs W&B's client where the upload finds it, with the set-up's script, and copies the script it runs", () => {
    const copied = dockerfile.filter((i) => i.op === 'COPY').flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const f of ['scripts/install-venv.sh', 'scripts/install-wandb.sh', 'scripts/wandb-upload.py']) {
      expect(copied).toContain(f);
      expect(existsSync(join(ROOT, f)), f).toBe(true);
    }
    const runs = dockerfile.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /apt-get install .*\bpython3-venv\b/.test(r))).toBe(true);
    // install-venv.sh never fails; the build checks the interpreter the upload looks for (src/upload/wandb-upload.ts).
    expect(runs.some((r) => r.includes('bash scripts/install-wandb.sh') && r.includes('test -x .wandb/venv/bin/python'))).toBe(true);
    expect(readFileSync(join(ROOT, 'src', 'upload', 'wandb-upload.ts'), 'utf8')).toContain("join(ROOT, '.wandb', 'venv', 'bin', 'python')");
    const installIndex = dockerfile.findIndex((i) => i.op === 'RUN' && i.args.includes('install-wandb.sh'));
    const copyIndex = dockerfile.findIndex((i) => i.op === 'COPY' && i.args.includes('scripts/install-wandb.sh'));
    expect(copyIndex).toBeGreaterThanOrEqual(0);
    expect(copyIndex).toBeLessThan(installIndex);
  });

  it("sets the malloc arena cap and libuv's thread pool bin/reverify.js's shebang sets (its ENTRYPOINT bypasses the shebang)", () => {
    const shebang = readFileSync(join(ROOT, 'bin', 'reverify.js'), 'utf8').split('\n')[0];
    const vars = /^#!\/usr\/bin\/env -S MALLOC_ARENA_MAX=(\d+) UV_THREADPOOL_SIZE=(\d+) node$/.exec(shebang);
    expect(vars).not.toBeNull();
    const env = dockerfile.filter((i) => i.op === 'ENV').map((i) => i.args);
    for (const [name, value] of [
      ['MALLOC_ARENA_MAX', vars![1]],
      ['UV_THREADPOOL_SIZE', vars![2]],
    ])
      expect(env.some((args) => new RegExp(`(^|\\s)${name}=${value}(\\s|$)`).test(args))).toBe(true);
  });

  it('.dockerignore keeps node_modules, .temporal and .git out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    for (const p of ['node_modules', '.temporal', '.git']) expect(ignored).toContain(p);
    // Nothing the image needs is ignored.
    for (const p of ['bin', 'src', 'workflows', 'activities', 'scripts', 'package.json', 'package-lock.json']) {
      expect(ignored).not.toContain(p);
    }
  });
});
