import os from 'node:os';
import path from 'node:path';
import { isWithinFolder } from '../files/folderPaths.js';

/**
 * The environment the oracle runs the start's tests in: none of the user's or the
 * actor's per-user configuration (an empty home: no `~/.config`, no user
 * site-packages, no `~/.npmrc`), none of the variables that steer a runner
 * (`PYTEST_ADDOPTS`, `NODE_OPTIONS`, `PYTHONPATH`…), and a PATH without a folder of
 * the repository in it, so that no file in the tree stands in for a program.
 *
 * What is kept: the variables a program needs to run at all (the locale, the time
 * zone, the temporary folder, proxies) and where the toolchains keep what is installed
 * (rustup's toolchains, Go's module cache), resolved from the real home, since an
 * empty home would leave them without it.
 */
const KEPT =
  /^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR|TEMP|TMP|USER|LOGNAME|SHELL|TERM|CI|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|SSL_CERT_FILE|SSL_CERT_DIR|NODE_EXTRA_CA_CERTS|VIRTUAL_ENV|CONDA_PREFIX|JAVA_HOME|GOROOT)$/;

export function oracleEnvironment(environment: NodeJS.ProcessEnv, where: { home: string; repositoryRoot: string }): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(environment)) if (value !== undefined && KEPT.test(name)) kept[name] = value;
  const realHome = environment.HOME ?? os.homedir();
  const path_ = (kept.PATH ?? '')
    .split(path.delimiter)
    .filter((folder) => path.isAbsolute(folder) && !isWithinFolder(where.repositoryRoot, folder))
    .join(path.delimiter);
  return {
    ...kept,
    PATH: path_,
    HOME: where.home,
    XDG_CONFIG_HOME: path.join(where.home, '.config'),
    XDG_CACHE_HOME: path.join(where.home, '.cache'),
    XDG_DATA_HOME: path.join(where.home, '.local', 'share'),
    RUSTUP_HOME: environment.RUSTUP_HOME ?? path.join(realHome, '.rustup'),
    CARGO_HOME: environment.CARGO_HOME ?? path.join(realHome, '.cargo'),
    GOPATH: environment.GOPATH ?? path.join(realHome, 'go'),
    // Content-addressed: what the user's builds cached is the same build here.
    GOCACHE: environment.GOCACHE ?? path.join(realHome, '.cache', 'go-build'),
    // Python writes no bytecode into the tree, and reads no user site-packages.
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONNOUSERSITE: '1',
  };
}
