"""Type stubs of the extension module (private: use the package's functions)."""

from typing import Any, Callable, List, Optional, Tuple

__version__: str

class RustError(Exception): ...

class _Solver:
    def __init__(
        self,
        n: int,
        indptr: int,
        indices: int,
        data: int,
        nnz: int,
        index_bits: int,
        value_bits: int,
        options: dict[str, Any],
    ) -> None: ...
    @staticmethod
    def on_device(
        n: int,
        indptr: int,
        indices: int,
        data: int,
        nnz: int,
        value_bits: int,
        options: dict[str, Any],
    ) -> "_Solver": ...
    def solve(
        self, b: int, x0: int, x: int, callback: Optional[Callable[[float], Any]] = None
    ) -> Tuple[bool, bool, int]: ...
    def solve_device(
        self,
        b: int,
        x: int,
        callback: Optional[Callable[[float], Any]] = None,
        zero_x: bool = False,
    ) -> Tuple[bool, bool, int]: ...
    def solve_many(self, b: int, k: int, x: int) -> List[Tuple[bool, bool, int]]: ...
    def last_column_report_json(self, j: int) -> Optional[str]: ...
    def update_values(
        self,
        n: int,
        indptr: int,
        indices: int,
        data: int,
        nnz: int,
        index_bits: int,
        value_bits: int,
    ) -> str: ...
    def update_device_values(self, data: int, nnz: int) -> str: ...
    def last_report_json(self) -> Optional[str]: ...
    @property
    def n(self) -> int: ...
    @property
    def rust_setup_seconds(self) -> float: ...
    @property
    def backend(self) -> str: ...
    @property
    def notes(self) -> List[str]: ...
    @property
    def dtype(self) -> str: ...

def backends_json() -> str: ...
def option_names() -> List[str]: ...
def address(array: Any) -> int: ...
def rust_one_call_seconds(
    n: int,
    indptr: int,
    indices: int,
    data: int,
    nnz: int,
    index_bits: int,
    value_bits: int,
    b: int,
    options: dict[str, Any],
) -> float: ...
def rust_one_call_steps(
    n: int,
    indptr: int,
    indices: int,
    data: int,
    nnz: int,
    index_bits: int,
    value_bits: int,
    b: int,
    options: dict[str, Any],
    borrowed: bool = False,
) -> List[Tuple[str, float]]: ...
def solve_once(
    n: int,
    indptr: int,
    indices: int,
    data: int,
    nnz: int,
    index_bits: int,
    value_bits: int,
    b: int,
    x0: int,
    x: int,
    options: dict[str, Any],
    callback: Optional[Callable[[float], Any]] = ...,
) -> Tuple[bool, bool, int]: ...
def register_plain(csr_types: Tuple[type, ...], empty: Callable[..., Any]) -> None: ...
def solve_plain(
    method: str,
    a: Any,
    b: Any,
    x0: Optional[Any],
    rtol: Any,
    atol: Any,
    maxiter: Optional[Any],
    options: dict[str, Any],
    callback: Optional[Callable[[float], Any]] = ...,
) -> Optional[Tuple[Any, int]]: ...
