import pytest

from ratio_bench.serve.links import anthology_id, source_url


@pytest.mark.parametrize(
    ("paper_id", "url"),
    [
        ("arxiv/2510.19292", "https://arxiv.org/abs/2510.19292"),
        ("iclr26/J7vpYSsdeO", "https://openreview.net/forum?id=J7vpYSsdeO"),
        ("neurips25/JcEqp4aPmb", "https://openreview.net/forum?id=JcEqp4aPmb"),
        ("neurips/009LK0vLcY", "https://openreview.net/forum?id=009LK0vLcY"),
        ("acl/2020.acl.main.371", "https://aclanthology.org/2020.acl-main.371/"),
        ("acl/2024.findings.acl.975", "https://aclanthology.org/2024.findings-acl.975/"),
        ("acl/1963.earlymt.1.1", "https://aclanthology.org/1963.earlymt-1.1/"),
        ("acl/P17.2.8", "https://aclanthology.org/P17-2008/"),
        ("acl/W17.23.40", "https://aclanthology.org/W17-2340/"),
        ("acl/C10-2104", "https://aclanthology.org/C10-2104/"),
    ],
)
def test_ids_of_the_shared_corpus_link_to_their_paper(paper_id, url):
    assert source_url(paper_id) == url


@pytest.mark.parametrize(
    "paper_id", [None, "", "lab/notes-7", "arxiv/not an id", "acl/whatever", "iclr26/a b", "no-prefix"]
)
def test_other_ids_get_no_link(paper_id):
    assert source_url(paper_id) is None


def test_anthology_ids_keep_four_digit_paper_numbers():
    assert anthology_id("K18.1.19") == "K18-1019"
    assert anthology_id("L12.1.53") == "L12-1053"
