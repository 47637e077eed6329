/**
 * Holds `flock(2)` locks for this process in ONE long-lived helper: a `bash` loop that opens a lock
 * file on a descriptor of its own and runs util-linux's `flock --nonblock` on that descriptor. The
 * lock belongs to the open file description, so it stays held after `flock` exits, until the loop
 * closes the descriptor. Node has no `flock` in core (see run-lock.ts); spawning a helper per lock
 * cost a fork of this whole process each time (~6 ms of CPU per commit), one bash process for the
 * process's life costs that once.
 *
 * If this process dies (even SIGKILL) the kernel closes the pipe, the loop reads end-of-file and
 * exits, its descriptors close and the kernel drops every lock it held: no stale owner.
 *
 * Protocol, one line each way per request, in order: `take <path as \xHH escapes>` answers
 * `ok <fd>`, `held` (another process has it) or `error <reason>`; `drop <fd>` answers `dropped`.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Socket } from 'node:net';

/** `flock`'s exit status when the lock is held elsewhere (EX_TEMPFAIL, as NeMo Gym's incomplete-run code). */
const HELD_EXIT = 75;

const LOOP = `
while IFS=' ' read -r op arg; do
  case $op in
    take)
      printf -v path '%b' "$arg"
      if ! exec {fd}>>"$path"; then echo "error cannot open the lock file"; continue; fi
      err=$(flock --nonblock --conflict-exit-code ${HELD_EXIT} "$fd" 2>&1)
      rc=$?
      if [ "$rc" = 0 ]; then echo "ok $fd"; continue; fi
      exec {fd}>&-
      if [ "$rc" = ${HELD_EXIT} ]; then echo held
      elif [ "$rc" = 127 ]; then echo "error flock-missing"
      else echo "error \${err//$'\\n'/ }"; fi ;;
    drop) exec {arg}>&-; echo dropped ;;
  esac
done 2>/dev/null
`;

/** What `take` found. */
export type TakeResult = { fd: number } | { held: true } | { error: string };

/** A path as `\xHH` escapes of its bytes: any byte but NUL survives bash's `read` and `printf %b`. */
function escapedPath(path: string): string {
  return [...Buffer.from(path)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
}

export class FlockHolder {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  private buffered = '';
  private failure: Error | null = null;

  constructor() {
    this.child = spawn('bash', ['-c', LOOP], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => {
      this.buffered += text;
      for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        this.waiting.shift()?.resolve(line);
        this.idle();
      }
    });
    const gone = (err: Error) => {
      // The locks it held are dropped with it; the next lock starts a new helper.
      if (shared === this) shared = null;
      this.failure ??= err;
      for (const w of this.waiting.splice(0)) w.reject(this.failure);
    };
    this.child.once('error', (err: NodeJS.ErrnoException) => gone(err.code === 'ENOENT' ? new Error('`bash` is not on PATH') : err));
    this.child.once('close', () => gone(new Error('the lock helper (bash) exited')));
    this.child.stdin.on('error', () => undefined); // its exit says why
    this.idle();
  }

  /** Takes the lock on `path` (creating the file), without waiting for another holder. */
  async take(path: string): Promise<TakeResult> {
    const line = await this.ask(`take ${escapedPath(path)}`);
    if (line.startsWith('ok ')) return { fd: Number(line.slice(3)) };
    if (line === 'held') return { held: true };
    const reason = line.slice('error '.length);
    return { error: reason === 'flock-missing' ? '`flock` (util-linux) is not on PATH: install util-linux' : reason };
  }

  /** Drops a lock `take` returned. */
  async drop(fd: number): Promise<void> {
    await this.ask(`drop ${fd}`);
  }

  private ask(request: string): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.busy();
      this.child.stdin.write(`${request}\n`);
    });
  }

  /** While a request waits, the helper keeps this process alive; idle, it never does. */
  private busy(): void {
    this.child.ref();
    for (const pipe of this.pipes()) pipe.ref();
  }

  private idle(): void {
    if (this.waiting.length > 0) return;
    this.child.unref();
    for (const pipe of this.pipes()) pipe.unref();
  }

  /** The pipes to the helper: sockets (typed as plain streams). */
  private pipes(): Socket[] {
    return [this.child.stdin, this.child.stdout] as unknown as Socket[];
  }
}

let shared: FlockHolder | null = null;

/** This process's lock holder, started on first use. */
export function flockHolder(): FlockHolder {
  shared ??= new FlockHolder();
  return shared;
}
