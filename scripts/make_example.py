"""Generate hieranon's shipped example: ``src/hieranon/data/patients.csv``,
its ARX-format hierarchies and ``patients.yaml``.

The table is made up (seeded, so re-running gives the same files): patients
of a clinic, in the style of the seeds' running examples (gender, age,
4-digit postcode, date of birth; diagnosis is sensitive). Patients cluster in
a few postcode areas and age groups, so some (gender, age, postcode)
combinations are common while others are unique; two pairs of twins share
every quasi-identifier.

Run from the repository root:  python scripts/make_example.py
"""

from __future__ import annotations

import csv
import random
from datetime import date, timedelta
from pathlib import Path

from hieranon.hierarchies import readers as H

OUT = Path(__file__).resolve().parents[1] / "src" / "hieranon" / "data"
REFERENCE = date(2024, 7, 1)  # ages are completed years on this day
SEED = 4351

DIAGNOSES = ["hypertension", "asthma", "diabetes", "migraine", "depression", "back pain",
             "obesity", "stress", "influenza", "eczema", "heart disease", "arthritis"]
YOUNGER = DIAGNOSES[:8]
OLDER = ["hypertension", "asthma", "obesity", "stress", "influenza", "eczema", "heart disease", "arthritis",
         "hypertension"]  # hypertension twice as likely
# (gender, age centre, age spread, postcodes, members)
PROFILES = [
    ("female", 34, 3, ["4350", "4351", "4352"], 9),
    ("male", 36, 3, ["4350", "4351", "4353"], 8),
    ("female", 68, 4, ["4352", "4353"], 6),
    ("male", 71, 4, ["4353", "4357"], 5),
    ("female", 23, 2, ["4401", "4402"], 7),
    ("male", 24, 2, ["4401", "4402", "4405"], 6),
    ("female", 47, 4, ["4405", "4410"], 6),
    ("male", 52, 5, ["4410", "4412"], 6),
    ("female", 58, 5, ["4611", "4612"], 6),
    ("male", 41, 4, ["4611", "4613", "4615"], 6),
    ("female", 79, 5, ["4615", "4620"], 4),
    ("male", 18, 1, ["4612"], 3),
]
OUTLIERS = [("male", 94, "4699"), ("female", 101, "4301"), ("female", 29, "4488"),
            ("male", 63, "4399"), ("female", 45, "4660"), ("male", 87, "4470")]


def birth_date(rng: random.Random, age: int) -> date:
    """A date of birth giving ``age`` completed years on REFERENCE."""
    latest = REFERENCE.replace(year=REFERENCE.year - age)          # turned `age` today
    earliest = REFERENCE.replace(year=REFERENCE.year - age - 1) + timedelta(days=1)
    return earliest + timedelta(days=rng.randrange((latest - earliest).days + 1))


def main() -> None:
    rng = random.Random(SEED)
    people = []
    for gender, centre, spread, postcodes, n in PROFILES:
        for _ in range(n):
            age = max(17, centre + rng.randint(-spread, spread))
            people.append((gender, age, rng.choice(postcodes)))
    people += OUTLIERS
    rows = []
    for gender, age, postcode in people:
        rows.append([gender, age, postcode, birth_date(rng, age)])
    # two pairs of twins: same gender, date of birth and postcode
    for i in (3, 40):
        rows.append(list(rows[i]))
    rng.shuffle(rows)
    records = []
    for i, (gender, age, postcode, dob) in enumerate(rows, start=1):
        diagnosis = rng.choice(YOUNGER if age < 50 else OLDER)
        readmitted = "yes" if rng.random() < (0.15 if age < 60 else 0.4) else "no"
        records.append([f"P{i:03d}", gender, age, postcode, dob.strftime("%d/%m/%Y"), diagnosis, readmitted])

    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "patients.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "gender", "age", "postcode", "date_of_birth", "diagnosis", "readmitted"])
        w.writerows(records)

    hierarchies = {
        "gender": H.suppression("gender", ["female", "male"]),
        "age": H.intervals("age", range(0, 120), [5, 10, 20]),
        "postcode": H.masking("postcode", [r[3] for r in records]),
        "date_of_birth": H.dates("date_of_birth", [r[4] for r in records]),
    }
    for name, h in hierarchies.items():
        (OUT / f"patients_hierarchy_{name}.csv").write_text(h.to_arx_csv(";"), encoding="utf-8")

    (OUT / "patients.yaml").write_text(
        "# hieranon example: a made-up patients table (scripts/make_example.py)\n"
        "input: patients.csv\n"
        "k: 3\n"
        "# quasi-identifiers and their ARX-format hierarchy files (paths relative to this file)\n"
        "quasi_identifiers:\n"
        + "".join(f"  {name}: patients_hierarchy_{name}.csv\n" for name in hierarchies)
        + "identifying: [id]\n"
        "sensitive: [diagnosis]\n"
        "class: readmitted\n",
        encoding="utf-8",
    )
    print(f"wrote {len(records)} records and {len(hierarchies)} hierarchies to {OUT}")


if __name__ == "__main__":
    main()
