"""Configuration: strict validation with errors that name the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from toy_rules import toy_registry

from linter.config import Config, ConfigError, find_project_root, load_config


def cfg(tmp_path: Path, body: str) -> Config:
    (tmp_path / "pyproject.toml").write_text(body)
    return load_config([tmp_path], toy_registry())


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("[tool.shardlint]\nselekt = ['SHD']\n", "unknown key 'selekt' (did you mean 'select'?)"),
        ("[tool.shardlint]\nselect = 'SHD990'\n", "'select' must be a list of strings"),
        ("[tool.shardlint]\nselect = ['SHD7']\n", "unknown rule selector 'SHD7'"),
        ("[tool.shardlint]\nforce-exclude = 1\n", "'force-exclude' must be true or false"),
        ("[tool.shardlint]\ncheck-syntax = 'yes'\n", "'check-syntax' must be true or false"),
        ("[tool.shardlint.rules.SHD123]\nx = 1\n", "unknown rule 'SHD123'"),
        ("[tool.shardlint.rules.SHD990]\nlabl = 'x'\n", "unknown option 'rules.SHD990.labl'"),
        ("[tool.shardlint.rules.SHD990]\nlabel = 3\n", "'rules.SHD990.label': expected str, got int 3"),
        ("[tool.shardlint.per-file-ignores]\n'a/*' = 'SHD990'\n", "must be a list of codes"),
        ("[tool.shardlint\n", "invalid TOML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, body: str, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        cfg(tmp_path, body)
    assert needle in str(exc.value)
    assert str(tmp_path / "pyproject.toml") in str(exc.value)


def test_good_config(tmp_path: Path) -> None:
    c = cfg(
        tmp_path,
        "[tool.shardlint]\nselect=['SHD99']\nignore=['SHD991']\nextend-exclude=['gen']\n"
        "[tool.shardlint.per-file-ignores]\n'tests/*'=['SHD990']\n"
        "[tool.shardlint.rules.flag-min-calls]\nlabel='tiny'\n",
    )
    reg = toy_registry()
    assert c.enabled_codes(reg) == {"SHD990", "SHD992"}
    assert c.ignored_for("tests/x.py") == ("SHD990",)
    assert c.options_for("SHD990") == {"label": "tiny"}
    assert "gen" in c.all_excludes and "build" in c.all_excludes
    assert c.root == tmp_path.resolve()


def test_selection_specificity() -> None:
    reg = toy_registry()
    c = Config(root=Path("."), select=("SHD",), ignore=("SHD99",), extend_select=("SHD990",))
    # the more specific selector wins: SHD990 is back, SHD991 stays ignored
    assert c.enabled_codes(reg) == {"SHD000", "SHD900", "SHD990"}
    default = Config(root=Path(".")).enabled_codes(reg)
    assert "SHD900" not in default and "SHD992" not in default and "SHD990" in default


def test_project_root_discovery(tmp_path: Path) -> None:
    pkg = tmp_path / "src" / "top" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "src" / "top" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "m.py").write_text("")
    assert find_project_root(pkg / "m.py") == (tmp_path / "src").resolve()
    (tmp_path / "pyproject.toml").write_text("")
    assert find_project_root(pkg / "m.py") == tmp_path.resolve()


def test_explicit_config_file(tmp_path: Path) -> None:
    f = tmp_path / "shardlint.toml"
    f.write_text("select = ['SHD991']\n")
    c = load_config([tmp_path], toy_registry(), f)
    assert c.enabled_codes(toy_registry()) == {"SHD991"}
    with pytest.raises(ConfigError, match="configuration file not found"):
        load_config([tmp_path], toy_registry(), tmp_path / "nope.toml")
