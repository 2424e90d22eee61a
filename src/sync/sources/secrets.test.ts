import { describe, expect, it } from 'vitest';
import { extensionOf } from '../../shared/file-types.js';
import { SECRET_FILE_PATTERNS, secretPatternOf } from './secrets.js';

/** One example per pattern of the table: a pattern added without an example fails the first test. */
const EXAMPLES: Record<string, string[]> = {
  '.env': ['.env', '.ENV'],
  '.env.*': ['.env.local', '.env.production'],
  '*.env': ['prod.env'],
  '.env*': ['.env-staging.json', '.env_prod.txt', '.envrc', '.ENV-LOCAL'],
  '*.pem': ['server.pem', 'CA.PEM'],
  '*.key': ['tls.key'],
  '*.p12': ['cert.p12'],
  '*.pfx': ['cert.pfx'],
  '*.jks': ['store.jks'],
  '*.keystore': ['release.keystore'],
  '*.ppk': ['putty.ppk'],
  '*.asc': ['private.asc'],
  'id_rsa*': ['id_rsa', 'id_rsa.pub', 'ID_RSA'],
  'id_dsa*': ['id_dsa'],
  'id_ecdsa*': ['id_ecdsa_sk'],
  'id_ed25519*': ['id_ed25519'],
  '.npmrc': ['.npmrc'],
  '.pypirc': ['.pypirc'],
  '.netrc': ['.netrc'],
  _netrc: ['_netrc'],
  '.git-credentials': ['.git-credentials'],
  '.pgpass': ['.pgpass'],
  '.htpasswd': ['.htpasswd'],
  '.dockercfg': ['.dockercfg'],
  credentials: ['credentials'],
  'credentials*.json': ['credentials.json', 'Credentials-Prod.json'],
  'client_secret*.json': ['client_secret_123.apps.json'],
  'service-account*.json': ['service-account.json'],
  '*credentials*.{json,txt,csv,tsv,xml,yaml,yml,ini,toml,cfg,conf,properties}': [
    'credentials.txt',
    'aws_credentials.json',
    'gcloud-credentials.json',
    'db.credentials.yaml',
    'AWS-CREDENTIALS.CSV',
    'my_credentials_v2.ini',
  ],
  '*.kdbx': ['vault.kdbx'],
  'secrets.*': ['secrets.yaml', 'secrets.json', 'Secrets.md'],
  'secret.*': ['secret.txt'],
};

describe('secretPatternOf', () => {
  it('has an example for every pattern of the table', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual([...SECRET_FILE_PATTERNS].sort());
  });

  it.each(Object.entries(EXAMPLES).flatMap(([pattern, names]) => names.map((name) => [name, pattern])))(
    '%s matches %s',
    (name, pattern) => {
      expect(secretPatternOf(name)).toBe(pattern);
    },
  );

  it.each([
    'README.md',
    'environment.md',
    'env.md',
    'keys.md',
    'keynote.txt',
    'my-secrets-guide.md',
    'credentials.md',
    'rotating-credentials.html',
    'credentials-policy.docx',
    'credential.json',
    'env-setup.md',
    'id.json',
    'notes.txt',
  ])('leaves %s alone', (name) => {
    expect(secretPatternOf(name)).toBeNull();
  });

  it.each(['.pem', '.KEY', 'x.PEM', 'a.tar.pem', '.env', 'x.env', 'file.', 'noext', 'readme.md', ...Object.values(EXAMPLES).flat()])(
    '%s: the same answer with its extension handed over (as the walk does) as without',
    (name) => {
      expect(secretPatternOf(name, extensionOf(name))).toBe(secretPatternOf(name));
    },
  );

  it('takes a name that starts with its only dot for its extension, as the glob does (".pem" is a "*.pem")', () => {
    expect(secretPatternOf('.pem')).toBe('*.pem');
    expect(secretPatternOf('.pem', extensionOf('.pem'))).toBe('*.pem');
  });
});
