"""The papers hieranon cites, in one table.

Docstrings, messages and reports cite a paper by its authors and year
("Li et al. 2006, Def. 5", "Sun, Wang & Li 2008", "Fisher 1981"); this
module says which paper each such citation means. :data:`REFERENCES` maps a
short key (first author's surname and year) to a :class:`Reference`;
:func:`lookup` finds the papers a citation can mean from the first author's
surname and the year, which is all an author-year citation gives.

The five papers whose methods are the core of the package:

* Li et al. 2006 and Li et al. 2008 -- weighted hierarchical distance,
  KACA / KACA1 and KACA2, inconsistency;
* Sun, Wang & Li 2008 -- attribute priorities, DBCA and DBCA:CM, the
  classification metric CM;
* Han et al. 2014 -- MAGE's height-normalised distortion;
* Arca & Hewett -- multiple anonymity requirements, HeuristicMin, the
  precision Prec (the package follows the revised and expanded journal
  version of their 2020 workshop paper, which the entry names).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reference", "REFERENCES", "lookup"]


@dataclass(frozen=True)
class Reference:
    """One cited paper: surnames of its authors in order, year, title, venue."""

    authors: tuple[str, ...]
    year: int
    title: str
    venue: str

    @property
    def surname(self) -> str:
        """The first author's surname without particles ("de Waal" -> "Waal"),
        as a citation's parser reads it."""
        return self.authors[0].split()[-1]

    def cite(self) -> str:
        """The author-year citation the package writes: ``Sweeney 2002``,
        ``Gionis & Tassa 2009``, ``Sun, Wang & Li 2008``, ``Li et al. 2006``
        (four or more authors)."""
        a = self.authors
        if len(a) == 1:
            names = a[0]
        elif len(a) <= 3:
            names = ", ".join(a[:-1]) + " & " + a[-1]
        else:
            names = a[0] + " et al."
        return f"{names} {self.year}"


REFERENCES: dict[str, Reference] = {
    # -- the papers whose methods hieranon implements
    "li2006": Reference(
        ("Li", "Wong", "Fu", "Pei"), 2006,
        "Achieving k-anonymity by clustering in attribute hierarchical structures",
        "Data Warehousing and Knowledge Discovery (DaWaK 2006), LNCS 4081"),
    "li2008": Reference(
        ("Li", "Wong", "Fu", "Pei"), 2008,
        "Anonymization by local recoding in data with attribute hierarchical taxonomies",
        "IEEE Transactions on Knowledge and Data Engineering 20(9)"),
    "sun2008": Reference(
        ("Sun", "Wang", "Li"), 2008,
        "Priority driven k-anonymisation for privacy protection",
        "Australasian Data Mining Conference (AusDM 2008)"),
    "han2014": Reference(
        ("Han", "Yu", "Mo", "Lu", "Liu"), 2014,
        "MAGE: a semantics retaining k-anonymization method for mixed data",
        "Knowledge-Based Systems 55"),
    "arca2020": Reference(
        ("Arca", "Hewett"), 2020,
        "Realizing data anonymization as search with optimal guarantee (HeuristicMin)",
        "Workshop on AI for Privacy (AI4P 2020) at ECAI; revised and expanded as a journal article"),
    # -- privacy models
    "machanavajjhala2007": Reference(
        ("Machanavajjhala", "Kifer", "Gehrke", "Venkitasubramaniam"), 2007,
        "l-Diversity: privacy beyond k-anonymity",
        "ACM Transactions on Knowledge Discovery from Data 1(1)"),
    "li2007": Reference(
        ("Li", "Li", "Venkatasubramanian"), 2007,
        "t-Closeness: privacy beyond k-anonymity and l-diversity",
        "IEEE International Conference on Data Engineering (ICDE 2007)"),
    # -- the baselines
    "sweeney2002": Reference(
        ("Sweeney",), 2002,
        "Achieving k-anonymity privacy protection using generalization and suppression (MinGen, Datafly)",
        "International Journal of Uncertainty, Fuzziness and Knowledge-Based Systems 10(5)"),
    "samarati2001": Reference(
        ("Samarati",), 2001,
        "Protecting respondents' identities in microdata release",
        "IEEE Transactions on Knowledge and Data Engineering 13(6)"),
    "lefevre2005": Reference(
        ("LeFevre", "DeWitt", "Ramakrishnan"), 2005,
        "Incognito: efficient full-domain k-anonymity",
        "ACM SIGMOD International Conference on Management of Data (SIGMOD 2005)"),
    "lefevre2006": Reference(
        ("LeFevre", "DeWitt", "Ramakrishnan"), 2006,
        "Mondrian multidimensional k-anonymity",
        "IEEE International Conference on Data Engineering (ICDE 2006)"),
    "lefevre2006workload": Reference(
        ("LeFevre", "DeWitt", "Ramakrishnan"), 2006,
        "Workload-aware anonymization",
        "ACM SIGKDD International Conference on Knowledge Discovery and Data Mining (KDD 2006)"),
    "fung2005": Reference(
        ("Fung", "Wang", "Yu"), 2005,
        "Top-down specialization for information and privacy preservation",
        "IEEE International Conference on Data Engineering (ICDE 2005)"),
    "wang2004": Reference(
        ("Wang", "Yu", "Chakraborty"), 2004,
        "Bottom-up generalization: a data mining solution to privacy protection",
        "IEEE International Conference on Data Mining (ICDM 2004)"),
    # -- utility measures and tools
    "iyengar2002": Reference(
        ("Iyengar",), 2002,
        "Transforming data to satisfy privacy constraints",
        "ACM SIGKDD International Conference on Knowledge Discovery and Data Mining (KDD 2002)"),
    "dewaal1999": Reference(
        ("de Waal", "Willenborg"), 1999,
        "Information loss through global recoding and local suppression",
        "Netherlands Official Statistics 14"),
    "gionis2009": Reference(
        ("Gionis", "Tassa"), 2009,
        "k-Anonymization with minimal loss of information",
        "IEEE Transactions on Knowledge and Data Engineering 21(2)"),
    "prasser2014": Reference(
        ("Prasser", "Kohlmayer", "Lautenschläger", "Kuhn"), 2014,
        "ARX -- a comprehensive tool for anonymizing biomedical data",
        "AMIA Annual Symposium Proceedings 2014"),
    "prasser2016": Reference(
        ("Prasser", "Bild", "Eicher", "Spengler", "Kuhn"), 2016,
        "Lightning: utility-driven anonymization of high-dimensional data",
        "Transactions on Data Privacy 9(2)"),
    "prasser2017": Reference(
        ("Prasser", "Eicher", "Bild", "Spengler", "Kuhn"), 2017,
        "A tool for optimizing de-identified health data for use in statistical classification",
        "IEEE International Symposium on Computer-Based Medical Systems (CBMS 2017)"),
    "prasser2020": Reference(
        ("Prasser", "Eicher", "Spengler", "Bild", "Kuhn"), 2020,
        "Flexible data anonymization using ARX -- current status and challenges ahead",
        "Software: Practice and Experience 50(7)"),
    "templ2015": Reference(
        ("Templ", "Kowarik", "Meindl"), 2015,
        "Statistical disclosure control for micro-data using the R package sdcMicro",
        "Journal of Statistical Software 67(4)"),
    "cramer1946": Reference(
        ("Cramér",), 1946,
        "Mathematical methods of statistics (Cramér's V)",
        "Princeton University Press"),
    # -- re-identification risk and population uniqueness
    "pitman1996": Reference(
        ("Pitman",), 1996,
        "Some developments of the Blackwell-MacQueen urn scheme",
        "Statistics, Probability and Game Theory: Papers in Honor of David Blackwell, IMS Lecture Notes 30"),
    "hoshino2001": Reference(
        ("Hoshino",), 2001,
        "Applying Pitman's sampling formula to microdata disclosure risk assessment",
        "Journal of Official Statistics 17(4)"),
    "zayatz1991": Reference(
        ("Zayatz",), 1991,
        "Estimation of the percent of unique population elements on a microdata file using the sample",
        "US Bureau of the Census, Statistical Research Division Report RR-91/08"),
    "chen1998": Reference(
        ("Chen", "Keller-McNulty"), 1998,
        "Estimation of identification disclosure risk in microdata",
        "Journal of Official Statistics 14(1)"),
    "haas1998": Reference(
        ("Haas", "Stokes"), 1998,
        "Estimating the number of classes in a finite population",
        "Journal of the American Statistical Association 93(444)"),
    "dankar2012": Reference(
        ("Dankar", "El Emam", "Neisa", "Roffey"), 2012,
        "Estimating the re-identification risk of clinical data sets",
        "BMC Medical Informatics and Decision Making 12:66"),
    "elemam2013": Reference(
        ("El Emam",), 2013,
        "Guide to the de-identification of personal health information",
        "CRC Press (Auerbach)"),
    "benedetti1998": Reference(
        ("Benedetti", "Franconi"), 1998,
        "Statistical and technological solutions for controlled data dissemination",
        "Pre-proceedings of New Techniques and Technologies for Statistics (NTTS '98), Sorrento"),
    "franconi2004": Reference(
        ("Franconi", "Polettini"), 2004,
        "Individual risk estimation in mu-Argus: a review",
        "Privacy in Statistical Databases (PSD 2004), LNCS 3050"),
    "elliot2002": Reference(
        ("Elliot", "Manning", "Ford"), 2002,
        "A computational algorithm for handling the special uniques problem",
        "International Journal of Uncertainty, Fuzziness and Knowledge-Based Systems 10(5)"),
    "manning2008": Reference(
        ("Manning", "Haglin", "Keane"), 2008,
        "A recursive search algorithm for statistical disclosure assessment",
        "Data Mining and Knowledge Discovery 16(2)"),
    "skinner2002": Reference(
        ("Skinner", "Elliot"), 2002,
        "A measure of disclosure risk for microdata",
        "Journal of the Royal Statistical Society, Series B 64(4)"),
    # -- optimisation (the Lagrangian bounds and heuristic)
    "fisher1981": Reference(
        ("Fisher",), 1981,
        "The Lagrangian relaxation method for solving integer programming problems",
        "Management Science 27(1)"),
    "held1974": Reference(
        ("Held", "Wolfe", "Crowder"), 1974,
        "Validation of subgradient optimization",
        "Mathematical Programming 6"),
    "camerini1975": Reference(
        ("Camerini", "Fratta", "Maffioli"), 1975,
        "On improving relaxation methods by modified gradient techniques",
        "Mathematical Programming Study 3"),
    "beasley1990": Reference(
        ("Beasley",), 1990,
        "A Lagrangian heuristic for set-covering problems",
        "Naval Research Logistics 37(1)"),
    # -- cryptography (keyed pseudonyms)
    "bellare1996": Reference(
        ("Bellare", "Canetti", "Krawczyk"), 1996,
        "Keying hash functions for message authentication",
        "Advances in Cryptology (CRYPTO 1996), LNCS 1109"),
    # -- k-anonymity and risk-based privacy models
    "samarati1998": Reference(
        ("Samarati", "Sweeney"), 1998,
        "Protecting privacy when disclosing information: k-anonymity and its enforcement through generalization "
        "and suppression",
        "Technical report SRI-CSL-98-04, SRI International"),
    "elemam2008": Reference(
        ("El Emam", "Dankar"), 2008,
        "Protecting privacy using k-anonymity",
        "Journal of the American Medical Informatics Association 15(5)"),
    "nergiz2007": Reference(
        ("Nergiz", "Atzori", "Clifton"), 2007,
        "Hiding the presence of individuals from shared databases",
        "ACM SIGMOD International Conference on Management of Data"),
    # -- statistics
    "spearman1904": Reference(
        ("Spearman",), 1904,
        "The proof and measurement of association between two things",
        "American Journal of Psychology 15(1)"),
    # -- software design (the estimator conventions the methods follow)
    "pedregosa2011": Reference(
        ("Pedregosa", "Varoquaux", "Gramfort"), 2011,
        "Scikit-learn: machine learning in Python",
        "Journal of Machine Learning Research 12"),
    "buitinck2013": Reference(
        ("Buitinck", "Louppe", "Blondel"), 2013,
        "API design for machine learning software: experiences from the scikit-learn project",
        "ECML PKDD Workshop: Languages for Data Mining and Machine Learning"),
}


def lookup(surname: str, year: int) -> list[Reference]:
    """The references a citation "``surname`` ... ``year``" can mean (its first
    author's surname, particles such as "de" left out); empty when the table
    has none."""
    return [r for r in REFERENCES.values() if r.surname == surname and r.year == year]
