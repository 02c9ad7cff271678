"""Evaluation of the pipeline's stages against labelled data: the labels, pure scoring, predictions."""
