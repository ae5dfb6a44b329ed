#!/usr/bin/env bash
# Builds, without Docker, the file tree the image of infra/docker/Dockerfile would have under its
# WORKDIR (/app), by replaying the Dockerfile:
#   1. the build context (the working tree's files git does not ignore, committed or not, less
#      what .dockerignore excludes) is copied to <out-dir>.build;
#   2. the build stage's RUN steps run there (apt-get is skipped: the build tools come from this
#      machine; on a Node without prebuilt better-sqlite3 binaries reachable, set
#      npm_config_nodedir to local Node headers, e.g. npm_config_nodedir=/usr);
#   3. every `COPY --from=build <src...> <dst>` of the final stage copies into <out-dir>, so a path
#      the Dockerfile does not copy is missing from the tree. The final stage's RUN steps (mkdir
#      and chown of /data) are skipped.
# <out-dir> must be outside the repository, so that Node's module resolution cannot climb from
# the tree into the repository's node_modules.
#
# usage: scripts/docker/stage-image.sh [--if-changed] [--keep-build] [--print-hash] [--dockerfile FILE] <out-dir>
#   --if-changed  do nothing when <out-dir> was staged from the same inputs (<out-dir>.stamp:
#                 a hash of the build context, the Dockerfile, this replay and the Node running it)
#   --keep-build  keep the build stage's scratch copy (<out-dir>.build)
#   --print-hash  print that hash and stop
set -euo pipefail
exec node "$(dirname "${BASH_SOURCE[0]}")/stage-image.mjs" "$@"
