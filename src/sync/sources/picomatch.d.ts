// picomatch ships no types; this is the small part of its API the sources use.
declare module 'picomatch' {
  namespace picomatch {
    type Options = { dot?: boolean; nocase?: boolean };
    type Matcher = (path: string) => boolean;
    type ScanResult = { base: string; glob: string; isGlob: boolean; negated: boolean };
  }
  interface Picomatch {
    (glob: string | readonly string[], options?: picomatch.Options): picomatch.Matcher;
    makeRe(glob: string, options?: picomatch.Options): RegExp;
    scan(glob: string, options?: picomatch.Options): picomatch.ScanResult;
  }
  const picomatch: Picomatch;
  export = picomatch;
}
