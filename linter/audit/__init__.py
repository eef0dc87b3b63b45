"""``shardlint audit``: a fork against its base and a newer upstream.

- :mod:`linter.audit.trees`: folders or git refs, and the overlay (U + (F - B));
- :mod:`linter.audit.classify`: the engine run per tree and the classes;
- :mod:`linter.audit.contracts`: contract drift of the upstream symbols fork
  code subclasses or calls, from both trees' ``ast``;
- :mod:`linter.audit.report`: markdown, JSON, SARIF and the stderr summary;
- :mod:`linter.audit.command`: the click command.
"""
