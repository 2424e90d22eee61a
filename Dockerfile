# kbsync watch as a container: the daemon, its state and the embedded service's data on the /data volume.
# The README's "Docker" section has the commands (test/docker/image.test.ts runs exactly those).
# /data/kbsync.yaml is the config (`kbsync init` writes one); its relative paths are relative to /data.

FROM node:24-slim AS build
WORKDIR /app
# Dependencies first, so that a change of the sources rebuilds only the steps after them. Install
# scripts stay off: nothing here needs one (better-sqlite3 and @parcel/watcher ship prebuilt binaries,
# esbuild's comes as a package), and they would fetch a second Node (the `node` devDependency) and
# run node-gyp, which wants python3 and make. A registry other than npm's default can be given to
# these steps only, as build secrets: `npmrc` (an .npmrc) and `npm_ca` (its cafile).
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc \
    --mount=type=secret,id=npm_ca,target=/run/secrets/npm_ca \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bin ./bin
COPY kbsync.schema.json ./
COPY src ./src
# The bundle is all that bin/kbsync.js loads; the packages it leaves as imports are copied alone,
# without source maps, type declarations or other platforms' binaries (scripts/image-modules.js).
RUN npm run build \
 && node scripts/image-modules.js /out \
 && mkdir -p /out/dist/bundle \
 && cp dist/bundle/*.js dist/bundle/*.cjs /out/dist/bundle/ \
 && cp -r package.json bin kbsync.schema.json /out/

FROM node:24-slim
# git and CA certificates for Git sources; tini as PID 1, which forwards signals to node and reaps
# the git processes a source leaves behind. Their docs, man pages and translations are left out.
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
      'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' >/etc/dpkg/dpkg.cfg.d/kbsync-slim \
 && apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown node:node /data
ENV NODE_ENV=production
COPY --from=build /out /app
# The image's own unprivileged user (uid 1000): files it writes in /data are uid 1000's.
USER node
WORKDIR /data
VOLUME ["/data"]
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/kbsync.js"]
CMD ["watch", "-c", "/data/kbsync.yaml", "--http", "0.0.0.0:9464"]
