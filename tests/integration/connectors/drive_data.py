"""The Google Drive corpus the Drive tests share: two picked folders' worth of files in each format, shared in
each way Drive shares, and a folder outside the scope.

eng/ (picked)             runbook (Doc, group eng@), rates (Sheet, ann directly), link-only (Doc, anyone
                          with the link; dan owns it), logo.png (not a document)
eng/policies/             travel policy (PDF, domain acme.io), onboarding (.docx, domain acme.io)
other/ (not picked)       salaries (Doc, domain acme.io)
Groups: eng@ = ann + sre@; sre@ = cy. People: ann, cy (via nesting), bob (domain only), dan, erin@other.io.
"""

from __future__ import annotations

import io

from tests.servers.google_drive import DOC, SHEET, FakeDrive

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
RUNBOOK = b"# Pager runbook\n\n## Escalation\n\nPage the on-call SRE through Opsgenie after 15 minutes.\n"
RATES = b"Region,Rate,Owner\n" + b"".join(
    b"Region %d,%d EUR,owner%d@acme.io\n" % (n, 100 + n, n) for n in range(60)
)
PEOPLE = ("ann@acme.io", "cy@acme.io", "bob@acme.io", "dan@acme.io", "erin@other.io")


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF whose page says `text` (Helvetica), with a correct cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def word_file() -> bytes:
    from docx import Document

    document = Document()
    document.add_heading("Onboarding", 1)
    document.add_paragraph("Badges are issued by Facilities on day one.")
    document.add_heading("Laptops", 2)
    document.add_paragraph("IT ships laptops within three days.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def acme_drive(max_page: int = 2) -> FakeDrive:
    fake = FakeDrive(max_page=max_page)
    fake.groups["eng@acme.io"] = [
        {"kind": "admin#directory#member", "email": "ann@acme.io", "type": "USER", "status": "ACTIVE", "role": "MEMBER"},
        {"kind": "admin#directory#member", "email": "sre@acme.io", "type": "GROUP", "status": "ACTIVE", "role": "MEMBER"},
    ]  # fmt: skip
    fake.groups["sre@acme.io"] = [
        {"kind": "admin#directory#member", "email": "cy@acme.io", "type": "USER", "status": "ACTIVE"}
    ]
    fake.folder("eng", "Engineering")
    fake.folder("policies", "Policies", "eng")
    fake.folder("other", "Finance")
    fake.add("runbook", "Pager runbook", DOC, "eng", RUNBOOK)
    fake.share("runbook", "group", email="eng@acme.io")
    fake.add("rates", "Regional rates", SHEET, "eng", RATES)
    fake.share("rates", "user", email="ann@acme.io")
    fake.add("link-only", "Offsite plan", DOC, "eng", b"# Offsite\n\nThe offsite is in Lisbon in October.\n")
    fake.share("link-only", "user", role="owner", email="dan@acme.io")
    fake.share("link-only", "anyone")
    fake.add("logo", "logo.png", "image/png", "eng", b"\x89PNG....")
    fake.add(
        "travel",
        "Travel policy.pdf",
        "application/pdf",
        "policies",
        minimal_pdf("Travel is booked through Navan."),
    )
    fake.share("travel", "domain", domain="acme.io")
    fake.add("onboarding", "Onboarding.docx", DOCX, "policies", word_file())
    fake.share("onboarding", "domain", domain="acme.io")
    fake.add("salaries", "Salaries", DOC, "other", b"# Salaries\n\nBands are reviewed in March.\n")
    fake.share("salaries", "domain", domain="acme.io")
    return fake
