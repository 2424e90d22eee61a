# kbsync watch as a container: the daemon, its state and the embedded service's data on the /data volume.
#   docker build -t kbsync .
#   docker run -d -v "$PWD/docs:/data/docs:ro" -v kbsync-data:/data -p 9464:9464 kbsync
# /data/kbsync.yaml is the config (`kbsync init` writes one); its relative paths are relative to /data.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bin ./bin
COPY src ./src
# npm ci builds dist/ (the prepare script); the prune then drops the build tools.
RUN npm ci && npm prune --omit=dev

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
RUN mkdir -p /data && chown node:node /data
# The image's own unprivileged user (uid 1000).
USER node
WORKDIR /data
VOLUME ["/data"]
EXPOSE 9464
# Bind mounts from some hosts deliver no file events: the start-up probe then polls (see README).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/kbsync.js"]
CMD ["watch", "-c", "/data/kbsync.yaml", "--http", "0.0.0.0:9464"]
