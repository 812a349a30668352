"""An import-linter contract written as the doors that may open (pyproject.toml, `allowlist`).

import-linter's own types forbid named modules: a wall of them is kept by an import nobody
thought to forbid (a judge page reading `judging.models.Finding`, truth and all). An allowlist
contract names what its source packages may import directly, and everything else is broken:

    [[tool.importlinter.contracts]]
    name = "..."
    type = "allowlist"
    source_modules = ["judge"]
    allowed_modules = ["judging.selectors.judge", "content", ...]   # a module or its package
    allowed_external = ["nh3", "markdown_it"]   # optional: the third-party packages allowed;
                                                # absent, any (the standard library always)
    exempt_modules = ["blindjudge.urls"]        # optional: modules of the sources not held to it

A source package's imports of itself are always allowed. lint-imports loads this module from the
working directory (`contract_types` in pyproject.toml); tests/test_architecture.py plants an
import each contract must refuse and requires lint-imports to report it broken.
"""

import sys

import grimp
from importlinter import Contract, ContractCheck, fields, output


def _within(module: str, expressions) -> bool:
    return any(module == allowed or module.startswith(allowed + ".") for allowed in expressions)


class AllowListContract(Contract):
    type_name = "allowlist"

    source_modules = fields.ListField(subfield=fields.StringField())
    allowed_modules = fields.ListField(subfield=fields.StringField(), required=False)
    allowed_external = fields.ListField(subfield=fields.StringField(), required=False)
    exempt_modules = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        allowed = list(self.allowed_modules or [])  # type: ignore[arg-type]
        external = self.allowed_external  # None: any third-party package
        roots = {name.split(".")[0] for name in graph.modules if not graph.is_module_squashed(name)}
        illegal = []
        exempt = list(self.exempt_modules or [])  # type: ignore[arg-type]
        for source in self.source_modules:  # type: ignore[union-attr]
            for importer in sorted({source} | graph.find_descendants(source)):
                if _within(importer, exempt):
                    continue
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if _within(imported, [source]):
                        continue
                    root = imported.split(".")[0]
                    if root in roots:  # one of the project's packages
                        ok = _within(imported, allowed)
                    elif root in sys.stdlib_module_names or root == "__future__":
                        ok = True
                    else:
                        ok = external is None or _within(imported, external)
                    if not ok:
                        lines = [d["line_number"] for d in
                                 graph.get_import_details(importer=importer, imported=imported)]
                        illegal.append((importer, imported, lines))
        return ContractCheck(kept=not illegal, warnings=[], metadata={"illegal": illegal})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for importer, imported, lines in check.metadata["illegal"]:
            where = ", ".join(f"l.{line}" for line in lines) or "?"
            output.print_error(f"{importer} may not import {imported} ({where}): not on the list",
                               bold=False)
            output.new_line()
