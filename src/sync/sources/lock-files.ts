/**
 * The lock, swap, auto-save and backup files editors and office suites write beside a document: never
 * documents themselves, and often of a supported type by their extension (`~$report.docx`), so they
 * are told apart by name. Each detail says what wrote the file.
 */

const OFFICE = 'a Microsoft Office owner file (~$...): Office writes it beside a document while it is open; never synced';
const LIBREOFFICE = 'a LibreOffice lock file (.~lock...#): written beside a document while it is open; never synced';
const EMACS_AUTOSAVE = 'an emacs auto-save file (#...#): never synced';
const EMACS_LOCK = 'an emacs lock file (.#...): never synced';
const VIM_SWAP = 'a vim swap file (.*.swp): never synced';
const BACKUP = 'a backup copy an editor left (...~): never synced';

const TILDE = 0x7e;
const DOLLAR = 0x24;
const HASH = 0x23;
const DOT = 0x2e;
/** vim's swap names: `.name.swp`, then `.swo`, `.swn`... down to `.swa`, and `.swx` for its own test. */
const SWAP = /^\..+\.sw[a-px]$/;

/** What kind of lock or temporary file `baseName` is (the skip's detail), or null for any other name. */
export function lockFileOf(baseName: string): string | null {
  const first = baseName.charCodeAt(0);
  const last = baseName.charCodeAt(baseName.length - 1);
  if (first === TILDE && baseName.charCodeAt(1) === DOLLAR) return OFFICE;
  if (last === TILDE && baseName.length > 1) return BACKUP;
  if (last === HASH) {
    if (first === HASH && baseName.length > 2) return EMACS_AUTOSAVE;
    if (baseName.startsWith('.~lock.')) return LIBREOFFICE;
  }
  if (first === DOT) {
    if (baseName.charCodeAt(1) === HASH) return EMACS_LOCK;
    if (SWAP.test(baseName)) return VIM_SWAP;
  }
  return null;
}
