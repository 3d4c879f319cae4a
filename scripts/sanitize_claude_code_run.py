"""Copy one captured Claude Code run into tests/data/claude-code-runs/<name>/, sanitized.

    python scripts/sanitize_claude_code_run.py WORKDIR DEST

WORKDIR holds stdout.jsonl, config/ (CLAUDE_CONFIG_DIR) and repo/. The workdir's absolute
path becomes /RUN (and its project folder -RUN); the client's copies of its own requests
(api-request*) and its prompt/skill listings are dropped: they are large, hold the client's
own prompt text, and no parser reads them. Nothing else is changed.
"""
import json, os, shutil, sys
from pathlib import Path
src, dst, root = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[1].rstrip('/')
NEUTRAL = '/RUN'
DROP = {'api-request-shape', 'api-request-blob', 'api-request'}
DROP_ATTACH = {'skill_listing', 'prompt_snapshot', 'agent_listing_delta', 'deferred_tools_delta'}
proj_src = '-' + ''.join(c if c.isalnum() else '-' for c in root.lstrip('/'))
def fix(text): return text.replace(root, NEUTRAL).replace(proj_src, '-RUN')
if dst.exists(): shutil.rmtree(dst)
def copy_jsonl(a, b):
    b.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for line in a.read_text().splitlines():
        try: rec = json.loads(line)
        except ValueError: out.append(line); continue
        if rec.get('type') in DROP: continue
        if rec.get('type') == 'attachment' and (rec.get('attachment') or {}).get('type') in DROP_ATTACH: continue
        out.append(fix(line))
    b.write_text('\n'.join(out) + '\n')
copy_jsonl(src / 'stdout.jsonl', dst / 'stdout.jsonl')
for p in sorted((src / 'config' / 'projects').rglob('*')):
    if p.is_file() and 'memory' not in p.parts:
        rel = Path(fix(str(p.relative_to(src))))
        if p.suffix == '.jsonl': copy_jsonl(p, dst / rel)
        else: (dst / rel).parent.mkdir(parents=True, exist_ok=True); (dst / rel).write_text(fix(p.read_text()))
art = src / 'repo' / 'combined-index.md'
if art.exists(): (dst / 'repo').mkdir(parents=True, exist_ok=True); shutil.copy(art, dst / 'repo' / 'combined-index.md')
