import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

/** A process holding a file open for writing. */
export type Writer = { pid: number; command: string };

/** A file to look for among the processes' descriptors: by its name's last part and its inode. */
export type WrittenFile = { key: string; absPath: string; inode: number };

/** The access mode bits of a descriptor's flags (fdinfo's octal `flags:`): O_WRONLY is 1, O_RDWR 2. */
const ACCESS_MODE = 3;

/**
 * Which of `files` some process holds open for writing, by key; null when the platform cannot tell.
 * Linux only: each process's `/proc/PID/fd` links are read, and only a link whose target's last name
 * is one of the files' has its `/proc/PID/fdinfo` read, whose `ino:` must be the file's and whose
 * access mode must write (O_WRONLY or O_RDWR). It costs a readlink per descriptor of the processes
 * this one may look at (its own user's; every process for root), so the daemon asks only for files
 * written in the last minute. Elsewhere (macOS, Windows) there is no
 * such table short of running lsof or handle.exe, which cost far more: null, and the caller waits
 * for such a file to settle instead.
 */
export function openWriters(files: readonly WrittenFile[], o: { procDir?: string; selfPid?: number } = {}): Map<string, Writer> | null {
  const proc = o.procDir ?? '/proc';
  if (o.procDir === undefined && process.platform !== 'linux') return null;
  let pids: string[];
  try {
    readdirSync(`${proc}/self/fd`);
    pids = readdirSync(proc);
  } catch {
    return null;
  }
  const found = new Map<string, Writer>();
  if (files.length === 0) return found;
  const byName = new Map<string, WrittenFile[]>();
  for (const f of files) {
    const name = f.absPath.slice(f.absPath.lastIndexOf('/') + 1);
    const same = byName.get(name);
    if (same === undefined) byName.set(name, [f]);
    else same.push(f);
  }
  const self = String(o.selfPid ?? process.pid);
  for (const pid of pids) {
    if (pid === self || !isDigits(pid)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${pid}/fd`);
    } catch {
      continue; // another user's process, or one gone since the listing
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`${proc}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      // Sockets, pipes and anonymous inodes are not paths.
      if (target.charCodeAt(0) !== 0x2f) continue;
      const named = byName.get(target.slice(target.lastIndexOf('/') + 1));
      if (named === undefined) continue;
      const info = descriptorInfo(`${proc}/${pid}/fdinfo/${fd}`, `${proc}/${pid}/fd/${fd}`);
      if (info === null || (info.flags & ACCESS_MODE) === 0) continue;
      for (const f of named)
        if (f.inode === info.inode && !found.has(f.key)) found.set(f.key, { pid: Number(pid), command: commandOf(proc, pid) });
      if (found.size === files.length) return found;
    }
  }
  return found;
}

/**
 * A descriptor's open flags and inode, from its fdinfo file (kernels before 5.10 write no `ino:`: the
 * link's stat gives it); null when it cannot be read (closed since).
 */
function descriptorInfo(infoPath: string, linkPath: string): { flags: number; inode: number } | null {
  try {
    const text = readFileSync(infoPath, 'latin1');
    const flags = /^flags:\s*([0-7]+)$/m.exec(text);
    if (flags === null) return null;
    const inode = /^ino:\s*(\d+)$/m.exec(text);
    return { flags: parseInt(flags[1] as string, 8), inode: inode === null ? statSync(linkPath).ino : Number(inode[1]) };
  } catch {
    return null;
  }
}

/** The program's name: argv[0]'s last part (a thread may have renamed its `comm`: node's reads MainThread), else comm. */
function commandOf(proc: string, pid: string): string {
  try {
    const argv0 = readFileSync(`${proc}/${pid}/cmdline`, 'utf8').split('\0', 1)[0] ?? '';
    if (argv0 !== '') return argv0.slice(argv0.lastIndexOf('/') + 1);
    return readFileSync(`${proc}/${pid}/comm`, 'utf8').trim();
  } catch {
    return 'a process';
  }
}

function isDigits(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return name.length > 0;
}
