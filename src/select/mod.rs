//! Attention eligibility: which backends and engines can run an attention request, and why not.
