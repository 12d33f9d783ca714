#!/usr/bin/env bash
# The unprivileged user `npm run redteam` runs its attacks as a second time when it runs as
# root (the walls must hold for both: as root, bubblewrap keeps no user namespace of its own).
# Creates the system user rudder-redteam (home /var/lib/rudder-redteam, outside /tmp, no login
# shell) when missing and prints its name; as any other user, prints nothing and succeeds.
set -euo pipefail
user=rudder-redteam
if [ "$(id -u)" -ne 0 ]; then
  exit 0
fi
if ! id -u "$user" >/dev/null 2>&1; then
  useradd --system --create-home --home-dir "/var/lib/$user" --shell /usr/sbin/nologin "$user"
fi
echo "$user"
