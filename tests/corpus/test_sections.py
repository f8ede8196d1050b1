import pytest

from ratio_bench.corpus.sections import SectionCategory as C
from ratio_bench.corpus.sections import classify_heading, heading_depth, normalise_heading


@pytest.mark.parametrize(
    "heading, category",
    [
        ("Abstract", C.ABSTRACT),
        ("1 Introduction", C.INTRODUCTION),
        ("2 Related Work", C.RELATED_WORK),
        ("Background and Related Work", C.RELATED_WORK),
        ("3 Methodology", C.METHOD),
        ("3.2 Problem Formulation", C.METHOD),
        ("4 Experiments", C.EXPERIMENTS),
        ("Experimental Results", C.EXPERIMENTS),
        ("6 Discussion", C.DISCUSSION),
        ("Limitations", C.DISCUSSION),
        ("7 Conclusion and Future Work", C.CONCLUSION),
        ("Concluding Remarks", C.CONCLUSION),
        ("Appendix A: Proofs", C.APPENDIX),
        ("Supplementary Material", C.APPENDIX),
        ("References", C.REFERENCES),
        ("Acknowledgments and Disclosure of Funding", C.ACKNOWLEDGMENTS),
        ("NeurIPS Paper Checklist", C.CHECKLIST),
        ("Gaussian Splatting", C.OTHER),
    ],
)
def test_classify_heading(heading, category):
    assert classify_heading(heading) is category


def test_normalise_and_depth():
    assert normalise_heading("**3.1 Gate Parameterisation.**") == "gate parameterisation"
    assert heading_depth("3 Method") == 1
    assert heading_depth("3.2.1 Details") == 3
    assert heading_depth("A.1 Extra") == 2
    assert heading_depth("Method") is None
