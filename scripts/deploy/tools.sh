#!/usr/bin/env bash
# Installs the pinned deployment validation tools into <repo>/.cache/tools (gitignored):
#   kustomize   renders k8s/ (sigs.k8s.io/kustomize/kustomize/v5)
#   kubeconform validates the rendered manifests against k8s/schemas (no network at check time)
# Both are built with `go install` from the Go module proxy (Go >= 1.22 on PATH). A tool already
# there at the pinned version is left alone, so running this again costs nothing.
#
#   bash scripts/deploy/tools.sh          # install what is missing, print the two paths
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GOBIN_DIR=${GUARD_TOOLS_DIR:-$REPO/.cache/tools}
KUSTOMIZE_VERSION=v5.7.1
KUBECONFORM_VERSION=v0.7.0

mkdir -p "$GOBIN_DIR"
# Test files run in parallel may each install: one at a time, the later ones find the tools there.
if command -v flock >/dev/null; then
  exec 9>"$GOBIN_DIR/.lock"
  flock 9
fi

# The module version a Go binary was built from (`go version -m`), empty when unknown.
built_version() {
  local bin=$1 module=$2
  [[ -x $bin ]] || return 0
  go version -m "$bin" 2>/dev/null | awk -v m="$module" '$1 == "mod" && $2 == m { print $3 }'
}

install_tool() {
  local name=$1 pkg=$2 module=$3 version=$4
  local bin=$GOBIN_DIR/$name
  if [[ $(built_version "$bin" "$module") == "$version" ]]; then
    echo "$name $version: already in $GOBIN_DIR"
    return
  fi
  echo "$name $version: go install $pkg@$version"
  GOBIN=$GOBIN_DIR GOFLAGS=-buildvcs=false CGO_ENABLED=0 go install "$pkg@$version"
  [[ $(built_version "$bin" "$module") == "$version" ]] || {
    echo "tools.sh: $bin is not $module@$version after go install" >&2
    exit 1
  }
}

command -v go >/dev/null || {
  echo "tools.sh: go is not on PATH (needed to install kustomize and kubeconform)" >&2
  exit 1
}

install_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
install_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform github.com/yannh/kubeconform "$KUBECONFORM_VERSION"
