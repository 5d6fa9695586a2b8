// render layer: see canvas.h
