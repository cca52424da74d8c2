"""Reason checks (tools/reasons.py) and the study-design reader (tools/evidence_design.py): hand cases, no model."""
from __future__ import annotations

import pytest

from evidex.agents.grounded_writer import kinds_of
from evidex.tools.evidence_design import design_of
from evidex.tools.reasons import (claim_names, copied_share, copies_sentence, evidence_spelling, is_copy,
                                  kept_reason_problem, name_phrases, names, names_claim, names_other, numbers,
                                  other_names, other_phrases, unbacked_facts)

CLAIM = "Lung adenocarcinoma positive for ALK-FUSIONS have been found to be sensitive to crizotinib treatment"
EVIDENCE = ("This two arm Phase III study named PROFILE 1007 (NCT00932893) was performed to assess crizotinib vs. "
            "established chemotherapy in non-small cell lung cancer patients positive for ALK rearrangement. 347 "
            "patients were randomized to receive crizotinib (N=173) or chemotherapy (N=174). Response rates were 65% "
            "for crizotinib treatment and 20% for chemotherapy (P<0.001).")


def test_names_are_tokens_with_digits_inner_capitals_or_capitals_inside_a_sentence():
    assert names("HER2 amplification predicts sensitivity to Trastuzumab.") == ["HER2", "Trastuzumab"]
    assert names("The R167Q variant was found. Patients had EGFR L858R.") == ["R167Q", "EGFR", "L858R"]
    assert claim_names(CLAIM) == {"alk", "fusions"}
    assert claim_names("Eenasul Fateh worked as a consultant.") == {"fateh"}
    assert claim_names("the variant is rare") == set()


def test_numbers_read_roman_phases():
    assert numbers("A phase III trial of 1,500 patients: 57% responded") == {"3", "1500", "57"}
    assert numbers("V600E and c.208G>A are not numbers") == set()


def test_a_reason_that_links_the_finding_to_the_claim_passes():
    reason = ("Phase 3 PROFILE 1007 in 347 ALK-positive lung cancer patients: response 65% with crizotinib vs 20% "
              "with chemotherapy, so ALK fusions predict crizotinib sensitivity.")
    assert kept_reason_problem(reason, EVIDENCE, CLAIM) is None


@pytest.mark.parametrize("reason, problem", [
    ("Phase 3 PROFILE 1014 in ALK-positive patients: response 75% with crizotinib.", "states what the evidence"),
    ("Response 65% with alectinib vs 20% with chemotherapy in ALK-positive patients.", "states what the evidence"),
    ("Response rates were 65% with the drug versus 20% with chemotherapy in the trial.", "does not name"),
    ("Supports the claim: Response rates were 65% for crizotinib treatment and 20% for chemotherapy, in ALK.",
     "copies an evidence sentence"),
    ("Response was higher with crizotinib in ALK and", "not a finished sentence"),
])
def test_a_reason_that_invents_misses_the_entity_copies_or_is_cut_fails(reason, problem):
    assert kept_reason_problem(reason, EVIDENCE, CLAIM).startswith(problem)


def test_facts_may_come_from_the_claim_and_its_context():
    assert unbacked_facts("EGFR L858R NSCLC responded to erlotinib.", "Patients responded to erlotinib.",
                          "EGFR L858R NSCLC is sensitive to erlotinib") == []
    assert unbacked_facts("VHL R167Q was found in 7 families.", "This mutation was found in six families.",
                          "R167Q is pathogenic", {"Molecular Profile": "VHL R167Q"}) == ["7"]
    # a number the evidence spells out, an abbreviation it writes in full
    assert unbacked_facts("BCOR ITD in 22 CCSK cases.", "Twenty two clear cell sarcomas of kidney had BCOR ITD.") == []
    assert unbacked_facts("ALL in 5 cases.", "Glioma in five cases.") == ["ALL"]
    plural = "41% of DAs had MYB rearrangements."  # an abbreviation's plural
    assert unbacked_facts(plural, "MYB rearrangements in 41% of diffuse astrocytomas.") == []
    assert unbacked_facts(plural, "MYB rearrangements in 41% of glioblastomas.") == ["DAs"]
    assert unbacked_facts("Jerry Goldsmith's score.", "A film score by Jerry Goldsmith.") == []
    # "all" stated as 100%, but never as a count of 100
    assert unbacked_facts("RT-PCR: 100% of 26 cases had the fusion.", "RT-PCR found the fusion in all 26 cases.") == []
    assert unbacked_facts("RT-PCR: 100 cases had the fusion.", "RT-PCR found the fusion in all 26 cases.") == ["100"]


def test_a_key_fact_lifted_from_a_long_sentence_is_not_a_copy_but_a_retold_sentence_is():
    evidence = "This missense mutation was found in six VHL type 2 families (lineages 100, 42, 44, 88, 105, 135)."
    assert not copies_sentence("Six VHL type 2 families", evidence)
    assert copies_sentence("This missense mutation was found in six VHL type 2 families", evidence)
    assert not copies_sentence("Family study: the mutation occurs in six families with VHL type 2", evidence)


def test_copy_share_counts_words_in_long_shared_runs_of_one_sentence():
    sentence = "Response rates were 65% for crizotinib treatment and 20% for chemotherapy"
    assert copied_share(sentence + ".", EVIDENCE) == 1.0 and is_copy(sentence, EVIDENCE)
    assert copied_share("Crizotinib gave a 65% response rate.", EVIDENCE) == 0.0
    # runs from two different sentences do not add up to a copy of one
    assert not is_copy("Patients were randomized to receive crizotinib; response rates were 65% for crizotinib.",
                       EVIDENCE)


def test_a_discard_reason_names_what_the_item_is_about_instead():
    text = "In a phase 1/2 trial, patients with refractory AML with FLT3 mutation received gilteritinib."
    claim = "EGFR L858R positive NSCLC is sensitive to afatinib."
    assert other_names(text, claim)[:2] == ["AML", "FLT3"]
    assert "gilteritinib" in other_names(text, claim)
    assert names_other("Not about this claim: it is about gilteritinib in FLT3-mutant AML.", text, claim)
    assert not names_other("Not about this claim.", text, claim)
    assert not names_other("Not about this claim: it is about afatinib in NSCLC.", text, claim)
    assert names_claim("EGFR-mutant tumours responded.", claim) and not names_claim("Tumours responded.", claim)


def test_names_of_several_words_stay_whole():
    text = ("James P. Comer was born in East Chicago, Indiana on September 25, 1934. Patients with FLT3-ITD AML and "
            "EGFR L858R Ba/F3 cells received gilteritinib at Yale's clinic.")
    assert name_phrases(text) == ["James P. Comer", "East Chicago", "Indiana", "September", "FLT3-ITD AML",
                                  "EGFR L858R Ba/F3", "gilteritinib", "Yale"]
    # what the claim names is never what the item is about instead; a date is not a subject; no phrase twice
    claim = "EGFR L858R Ba/F3 cells are sensitive to afatinib; Comer agreed."
    assert other_phrases(text, claim, limit=5) == ["James P. Comer", "East Chicago", "Indiana", "FLT3-ITD AML",
                                                    "gilteritinib"]
    assert other_phrases("Criss Angel starred in Criss Angel Mindfreak.", "Aladin is a magician.") == ["Criss Angel"]
    assert other_phrases("A phase III trial of Korean patients with MCF-7 cells at 2.5nM.", "BRAF V600E") == ["MCF-7"]
    assert name_phrases("The EWSR1::ERG fusion marks Ewing sarcoma.") == ["EWSR1::ERG", "Ewing sarcoma"]


@pytest.mark.parametrize("text, design", [
    ("On May 14, 2013, the U.S. Food and Drug Administration approved erlotinib for NSCLC.", "approval"),
    ("A randomized phase 3 trial involving 173 NSCLC patients.", "phase 3 trial"),
    ("In a randomized trial of 173 NSCLC patients, erlotinib prolonged survival.", "randomized trial"),
    ("In a phase 1/2 trial, patients with AML received gilteritinib.", "phase 1/2 trial"),
    ("In a phase II trial, patients with AML received gilteritinib.", "phase 2 trial"),
    ("In the Phase I study PROFILE 1001 a dose was established.", "phase 1 trial"),
    ("In a retrospective study of 82 patients, crizotinib was associated with survival.", "patient study"),
    ("This missense mutation was found in six VHL type 2 families.", "family study"),
    ("The fusion was detected in 79% (58/73) of carcinomas assayed.", "case series"),
    ("A 28 year-old patient with NSCLC responded to crizotinib.", "case report"),
    ("Xenografts in nude mice shrank with the drug.", "mouse study"),
    ("Ba/F3 cells expressing the fusion were sensitive to crizotinib.", "cell study"),
])
def test_the_design_an_evidence_text_states(text, design):
    assert design_of(text).name == design


def test_kept_items_are_counted_clinical_and_preclinical():
    texts = ["Ba/F3 cells were sensitive.", "A randomized phase 3 trial.", "A phase III trial.", "Prose only."]
    assert kinds_of(texts) == "2 clinical, 1 preclinical"
    assert kinds_of(["Ba/F3 cells were sensitive."]) == "1 preclinical"
    assert kinds_of(["Eenasul Fateh was a consultant."]) == ""


def test_a_word_one_slip_from_the_evidence_is_spelt_as_the_evidence_spells_it():
    evidence = ("This nonsense mutation was found in one patient with pheochromocytoma and von Hippel-Lindau disease. "
                "Gilteritinib inhibited FLT3 phosphorylation in 12 patients; two relapses. NCT01871805. A novel by "
                "Nina Bawden. The farmer site.")
    cases = {
        # a letter dropped; a capital opening a sentence stays
        "Nonsense mutation with pheochromoctoma.": "Nonsense mutation with pheochromocytoma.",
        "Pheochromoctoma in one patient.": "Pheochromocytoma in one patient.",
        "Von Hippel-LindAU disease.": "Von Hippel-Lindau disease.",  # the same letters in another case
        "Gilteritinib inhibited FLT3 phosphoryaltion.": "Gilteritinib inhibited FLT3 phosphorylation.",  # swapped
        "Gilteritinibi inhibited FLT3.": "Gilteritinib inhibited FLT3.",  # a letter added
        "A novel by Nina Bawen.": "A novel by Nina Bawden.",  # a name of five letters
        "Studied at the former site.": "Studied at the former site.",  # a plain word under eight letters
        # never an ending, a short word, or a number or identifier
        "One patient had two relapse.": "One patient had two relapse.",
        "12 patient had NCT01871905.": "12 patient had NCT01871905.",
    }
    for text, spelt in cases.items():
        assert evidence_spelling(text, evidence) == spelt, text
    assert unbacked_facts("12 patient had NCT01871905.", evidence) == ["NCT01871905"]


def test_a_cyrillic_or_greek_look_alike_inside_a_latin_word_is_written_in_latin():
    evidence = 'Based on the novel "A Arte de Produzir Efeito Sem Causa". Born in \u041c\u043e\u0441\u043a\u0432\u0430.'
    assert evidence_spelling("The novel Sem Caus\u0430.", evidence) == "The novel Sem Causa."  # Cyrillic a
    assert evidence_spelling("An \u039fpera.", evidence) == "An Opera."  # Greek capital O: then checked as ever
    assert unbacked_facts("An Opera.", evidence) == ["Opera"]
    # a word wholly in another script, as the evidence writes it, stays
    assert evidence_spelling("Born in \u041c\u043e\u0441\u043a\u0432\u0430.", evidence) == \
        "Born in \u041c\u043e\u0441\u043a\u0432\u0430."


def test_a_number_or_name_broken_by_a_space_or_two_words_run_together_are_spaced_as_the_evidence_spaces_them():
    evidence = ("ORR: 42.1% vs 21.1% in 44 patients. Found in family 3708 and phospho-SMAD1/5/8 rose. 38 classical MN, "
                "29 cellular MN. Treated in 2019. 5 patients relapsed. The first to score 100 victories. She had the "
                "L184P (c.551T>C) mutation in mesenchymal chondrosarcoma. With G\u00e9rard Depardieu. Overall they rose.")
    cases = {"ORR 42.1% vs 21. 1%.": "ORR 42.1% vs 21.1%.", "In family 37 08.": "In family 3708.",
             "Phospho-SMAD1/5/ 8 rose.": "Phospho-SMAD1/5/8 rose.", "29 cellularMN.": "29 cellular MN.",
             "The first to score 100Victories.": "The first to score 100 victories.",
             "She had L184 P (c.551 T > C).": "She had L184P (c.551T>C).",  # an identifier broken by spaces
             "In mesenchymal chondro sarcoma.": "In mesenchymal chondrosarcoma.",  # a long word broken
             "With G\u00e9rardDepardieu.": "With G\u00e9rard Depardieu.",  # letters beyond ASCII
             "Over all they rose.": "Over all they rose.",  # a short word is never joined by guess
             # what the evidence itself writes apart stays apart
             "Treated in 2019. 5 patients relapsed.": "Treated in 2019. 5 patients relapsed.",
             "In 44 patients.": "In 44 patients."}
    for text, spaced in cases.items():
        assert evidence_spelling(text, evidence) == spaced, text
        assert unbacked_facts(spaced, evidence) == [], spaced


def test_a_singular_of_the_evidences_plural_and_a_number_written_against_its_unit_are_stated():
    assert unbacked_facts("QKI::NTRK2 in pilocytic astrocytoma.", "QKI::NTRK2 in 96 pilocytic astrocytomas.") == []
    assert unbacked_facts("LMNA-NTRK1: IC50 1.4 nM.", "IC50 for LMNA-NTRK1 (1.4nM) and TPM3-NTRK1 (2.5nM).") == []
    assert unbacked_facts("IC50 3.1 nM.", "IC50 for LMNA-NTRK1 (1.4nM).") == ["3.1"]
    assert unbacked_facts("600 patients had BRAF V600E.", "BRAF V600E in 45 patients.") == ["600"]  # a name's digits
    assert unbacked_facts("TPM3-NTRK1: IC50 2.5nM.", "IC50 for TPM3-NTRK1 (2.5nM).") == []  # the unit glued both sides
    assert unbacked_facts("TPM3-NTRK1: IC50 3.5nM.", "IC50 for TPM3-NTRK1 (2.5nM).") == ["3.5"]


def test_each_number_of_a_ratio_the_evidence_gives_is_stated():
    evidence = "BRAF mutations were found in 102/1291 samples; SMAD1/5/8 rose."
    assert unbacked_facts("BRAF mutations in 102 of 1291 samples.", evidence) == []
    assert unbacked_facts("BRAF mutations in 103 samples.", evidence) == ["103"]
    assert unbacked_facts("SMAD1 rose in 5 samples.", evidence) == ["5"]  # the digits of a name are no ratio


def test_words_in_a_script_the_evidence_does_not_use_are_facts_it_does_not_state():
    evidence = "Etv6-NTRK3 mice developed aggressive lymphoid leukemia."
    bent = "Etv6-NTRK3 mice developed aggressive \u6dcb\u5df4oid leukemia."
    assert unbacked_facts(bent, evidence) == ["\u6dcb\u5df4"]
    assert unbacked_facts("Etv6-NTRK3 mice developed aggressive lymphoid leukemia.", evidence) == []


@pytest.mark.parametrize("text, measured", [
    ("response 65% with crizotinib vs 20% with chemotherapy", True), ("9 of 9 carcinomas had the fusion", True),
    ("median PFS 7.7 months", True), ("IC50 2.5nM", True), ("HR=0.49", True), ("4/6 tumours", True),
    ("a phase 3 trial of 347 patients", False), ("born in 1962", False), ("exon 19 deletions", False),
    ("t(11;22) translocation", False), ("NCT00446225", False), ("at 12 weeks", False),
    ("a 10 year old patient", False), ("62 years of age", False), ("relapse after 3 years", True)])
def test_a_measured_result_is_a_number_with_what_it_measures(text, measured):
    from evidex.tools.cited_text import states_measure

    assert states_measure(text) is measured
