"""The grader of the student edition of "Llama 3, step by step": it runs a learner's notebook and judges each graded
step against Meta's reference code, run by the package ``plumbing`` beside this one. ``python -m plumbing grade``
(``make grade``) is its command line.

One job a module:

================= ===========================================================================
``grading``       :func:`grading.grade`: a notebook run and graded step by step into a report
``steps``         the graded steps, one module per notebook (``steps/n03_rmsnorm.py`` ...)
``cells``         a graded cell's solution lines, its stub, the lines the grader runs, the shortcuts its source takes
``kernel``        the student's kernel: running the notebook, capturing each step's values
``compare``       comparing a student's value with the reference's, bitwise or within a stated tolerance
``context``       what a check may use besides the student's values: the checkpoint and Meta's modules
``tripwire``      the watch, in the student's kernel, for forbidden calls from a solution's lines
``hints``         the instructor guide's hints, per graded step, for the feedback
``gradebook``     a folder of submissions graded into one CSV and a feedback file per student
``gradescope``    Gradescope's ``run_autograder``: a submission graded into ``results.json``
================= ===========================================================================
"""
