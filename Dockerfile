# syntax=docker/dockerfile:1
# Dependencies are installed from package-lock.json with npm (exactly what CI tests); the runtime is the
# official Bun image at the version pinned in package.json.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production \
    PORT=8000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    BUN_JSC_forceRAMSize=268435456 \
    BUN_JSC_largeHeapSize=20971520
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY src ./src
# the console app, bundled by the server at its first request
COPY console ./console
COPY sql ./sql
COPY bin ./bin
# The image's non-root user owns the data volume (embedded stores, write-ahead log, dead letters). The admin CLI is
# `phog` on PATH: `docker compose exec phog phog project create --name "My app"` (Bun runs it; there is no npm here).
RUN mkdir -p /data && chown -R bun:bun /data && ln -s /app/bin/phog /usr/local/bin/phog
USER bun
VOLUME ["/data"]
EXPOSE 8000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/_health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["bun", "run", "src/main.ts"]
