"""Writes the validation errors pydantic v2 gives for the interface's parameters, as a golden
fixture for services/gateway/test/pydantic-compat.test.ts. Run with any Python that has pydantic 2:
    python3 tools/pydantic-golden.py > services/gateway/test/fixtures/pydantic-errors.json
"""
import json
from typing import Annotated, Literal
from uuid import UUID

import pydantic
import pydantic_core
from pydantic import Field, TypeAdapter, ValidationError

ADAPTERS = {
    "q": TypeAdapter(Annotated[str, Field(min_length=1, max_length=1000)]),
    "limit": TypeAdapter(Annotated[int, Field(ge=1, le=100)]),
    "mode": TypeAdapter(Literal["quick", "ai"]),
    "file_id": TypeAdapter(UUID),
}

INPUTS = {
    "q": ["", "x" * 1001, "x", "x" * 1000, "🦓" * 1000, "🦓" * 1001],
    "limit": ["abc", "5.", "5.0", "5.5", " 7 ", "1_0", "0", "101", "-1", "1e2", "+5", "", "99999999999999999999",
              "0x10", "٥", "1__0", "_1", "1_", "50", "  ", "5.00", ".5", "05"],
    "mode": ["fast", "QUICK", "", "quick", "ai", " ai"],
    "file_id": ["not-a-uuid", "abc123", "3f2504e0-4f89-11d3-9a0c", "3f2504e0-4f8-11d3-9a0c-0305e82c3301", "123",
                "3f2504e0-4f89-11d3-9a0c-0305e82c330z", "{3f2504e0-4f89-11d3-9a0c-0305e82c3301", "urn:uuid:zz",
                "é", "3f2504e0-4f89-11d3-9a0c-0305e82c33011", "", "3f2504e04f8911d39a0c0305e82c3301a", "----",
                "upload", "file_sandbox_example", "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
                "3f2504e04f8911d39a0c0305e82c3301", "{3f2504e0-4f89-11d3-9a0c-0305e82c3301}",
                "urn:uuid:3f2504e0-4f89-11d3-9a0c-0305e82c3301", "3f2504e0-4f89-11d3-9a0c-0305e82c3301 ",
                "3f2504e0--4f89-11d3-9a0c-0305e82c3301", "3f2504e0-4f89-11d3-9a0c-0305e82c33-1"],
}

cases = []
for name, values in INPUTS.items():
    for value in values:
        try:
            ADAPTERS[name].validate_python(value)
            cases.append({"param": name, "input": value, "errors": []})
        except ValidationError as e:
            errors = json.loads(e.json(include_url=False))
            cases.append({"param": name, "input": value, "errors": errors})

print(json.dumps({"pydantic": pydantic.VERSION, "pydantic_core": pydantic_core.__version__, "cases": cases},
                 ensure_ascii=False, indent=1))
