"""Which files a shell command or a Python cell writes, from its text alone."""

from __future__ import annotations

import pytest

from scorers.writes import code_writes, repo_relative, shell_writes


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param(
            "sed -i 's/^VALUE = 0$/VALUE = 20/' pkg/mod_orders_03.py\ncat pkg/mod_orders_03.py",
            {"pkg/mod_orders_03.py": "shell"},
            id="sed-in-place-then-cat",
        ),
        pytest.param("sed -e s/a/b/ f.py", {}, id="sed-to-stdout-writes-nothing"),
        pytest.param("perl -pi -e s/a/b/ f.py", {"f.py": "shell"}, id="perl-in-place"),
        pytest.param(
            "sed -i.bak -e 's/x/y/' a.py b.py", {"a.py": "shell", "b.py": "shell"}, id="sed-two"
        ),
        pytest.param("echo x >> CHANGELOG.md", {"CHANGELOG.md": "shell"}, id="append"),
        pytest.param("cat pkg/a.py > /dev/null", {}, id="read-only"),
        pytest.param("grep -n x pkg/a.py | tee -a log.md", {"log.md": "shell"}, id="tee"),
        pytest.param(
            "cat > pkg/b.py <<'EOF'\nrm -rf pkg\nEOF\n", {"pkg/b.py": "shell"}, id="heredoc-body"
        ),
        pytest.param(
            "mv a.py b.py; cp c d; rm -f e",
            {"a.py": "delete", "b.py": "shell", "d": "shell", "e": "delete"},
            id="move-copy-remove",
        ),
        pytest.param("cd pkg && sed -i s/a/b/ x.py", {"pkg/x.py": "shell"}, id="cd-then-relative"),
        pytest.param(
            "python3 -c \"open('x.py', 'w').write('1')\"", {"x.py": "shell"}, id="python-c"
        ),
        pytest.param(
            "python - <<EOF\nfrom pathlib import Path\nPath('pkg/z.py').write_text('1')\nEOF",
            {"pkg/z.py": "shell"},
            id="python-heredoc",
        ),
        pytest.param("echo 1 2>&1 | grep x", {}, id="fd-redirect"),
        pytest.param("sed -i 's/a/b", {}, id="unclosed-quote-no-crash"),
    ],
)
def test_shell_writes(command: str, expected: dict[str, str]) -> None:
    assert dict(shell_writes(command)) == expected


def test_code_writes_names_written_files_only() -> None:
    code = "\n".join(
        [
            "from pathlib import Path",
            'p = Path("pkg/a.py")',
            "t = p.read_text()",
            'p.write_text(t.replace("0", "1"))',
            'Path("pkg/b.py").write_text("x")',
            'with open("pkg/c.py", "w") as fh: pass',
            'open("pkg/d.py").read()',
            'os.remove("pkg/e.py")',
            'shutil.copy("src.py", "pkg/f.py")',
            'Path("g.py").unlink()',
            'q = Path("pkg/read-only.py")',
            "print(q.read_text())",
        ]
    )
    assert dict(code_writes(code)) == {
        "pkg/a.py": "code",
        "pkg/b.py": "code",
        "pkg/c.py": "code",
        "pkg/e.py": "delete",
        "pkg/f.py": "code",
        "g.py": "delete",
    }


@pytest.mark.parametrize(
    ("path", "cwd", "expected"),
    [
        ("/srv/evals/item/repo/pkg/a.py", "/srv/evals/item/repo", "pkg/a.py"),
        ("./pkg/a.py", "/srv/evals/item/repo", "pkg/a.py"),
        ("pkg//a.py", None, "pkg/a.py"),
        ("/etc/passwd", "/srv/evals/item/repo", "etc/passwd"),
        ("/srv/evals/item/repo2/a.py", "/srv/evals/item/repo", "srv/evals/item/repo2/a.py"),
    ],
)
def test_repo_relative(path: str, cwd: str | None, expected: str) -> None:
    assert repo_relative(path, cwd) == expected
