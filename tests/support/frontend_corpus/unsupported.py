"""Functions outside the frontend's subset; each line marked `# error` is
where `dfc.FrontendError` must point, with the message in `EXPECTED`."""

import numpy as np


def while_loop(x):
    n = 3
    while n > 0:  # error
        x += 1.0
    return x


def loop_return(x):
    for i in range(3):
        if x[i] > 0:
            break
    else:
        return -1  # error
    return i


def comprehension(x):
    return sum([v for v in x])  # error


def early_return(x):
    if x[0] > 0:
        return x[0]  # error
    x += 1.0


def data_index(x):
    return x[int(x[0])]  # error


def broadcast_mismatch(x):
    return np.sum(x + x[:2])  # error


def array_condition(x):
    if x > 0:  # error
        return np.sum(x)
    return 0.0


def unknown_function(x):
    return np.sum(np.unwrap(x))  # error


def with_try(x):
    try:  # error
        y = x
    except ValueError:
        y = x
    return np.sum(y)


def out_of_bounds(x):
    return x[10]  # error


def loop_over_array(x):
    s = 0.0
    for v in x[0]:  # error
        s += v
    return s


def alias_rebound_in_loop(x):
    y = x
    for i in range(3):  # error
        x[0] += 1.0
        x = x * 2.0
    return np.sum(y)


def undefined_name(x):
    return x + y_undefined  # error  # noqa: F821


def swapped_arguments(A):
    B = A * 2.0
    for t in range(3):  # error
        B[1:-1] = 0.5 * (A[:-2] + A[2:])
        A, B = B, A
    return np.sum(A * A) + np.sum(B)


EXPECTED = {
    "while_loop": "this while loop never ends",
    "loop_return": "return in the else block of a loop is not supported",
    "comprehension": "unsupported expression: list comprehension",
    "early_return": "returns different numbers of values on different paths",
    "data_index": "int() of a run-time float",
    "broadcast_mismatch": "do not broadcast",
    "array_condition": "truth value of an array is ambiguous",
    "unknown_function": "call of unsupported function numpy.unwrap",
    "with_try": "unsupported statement: try statement",
    "out_of_bounds": "index 10 is out of bounds",
    "undefined_name": "name 'y_undefined' is not defined",
    "loop_over_array": "a for loop iterates over range(...), an array (its first axis), enumerate or zip",
    "alias_rebound_in_loop": "'x' is rebound in this loop while 'y' names the same array",
    "swapped_arguments": "'B' is carried by this loop as a view of an argument's array",
}
