"""Media stage: probing, exact frame sampling, synchronized cuts, mosaics, audio, frame cache."""
