"""shardlint's rules: one folder per rule, named after what it finds
(``checks/<rule_module>/``), and ``checks/facts/``, the project facts several
rules read. What a rule builds on is the public API in ``linter/api.py``."""
