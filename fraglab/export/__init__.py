"""From a layout to code and to the tools people use: CuTe and Triton forms, C++ headers, queries, pictures.

One module per form, each reading only the layout's attributes (row/col arrays and its spec):
cute.py (shape:stride), linear.py (Triton linear layout), header.py (constexpr C++), tikz.py (LaTeX),
query.py (where/what), diff.py (two layouts), html.py + page.html (the interactive page).
"""
