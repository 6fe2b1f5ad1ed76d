"""The Harbor task writer: TaskSpec in, a Harbor 0.25 task directory out."""
