#!/usr/bin/env python3
"""Small Keras models of the layer kinds Keras users train, exported by tf2onnx, to survey which
cbtrain imports, runs and trains (scripts/architecture_survey.sh drives the check).

Run in the Keras venv of models/README.md (tensorflow-cpu 2.15.1, tf2onnx 1.16.1):

    /tmp/kerasenv/bin/python models/keras_architectures.py --out /tmp/keras_arch

For every model <name> it writes <out>/<name>.op17.onnx (tf2onnx from_keras, opset 17, input
(N, 28, 28, 1) as Keras has it) with <name>.op17.input.npy / .output.npy (batch 3, Keras's
inference output: logits, or probabilities where the model ends in a softmax).
"""

import argparse
import os

import numpy as np
import tensorflow as tf
import tf2onnx
from tensorflow import keras
from tensorflow.keras import layers

SEED = 5151


def conv_bn(x, filters, kernel, strides=1, act="relu"):
    x = layers.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return layers.Activation(act)(x) if act else x


def mobilenet():
    """Inverted residuals: 1x1 expansion, depthwise 3x3, ReLU6, 1x1 projection, residual adds."""
    inp = keras.Input((28, 28, 1))
    x = conv_bn(inp, 16, 3, act=tf.nn.relu6)
    for filters, strides in ((16, 1), (24, 2), (24, 1)):
        y = conv_bn(x, x.shape[-1] * 4, 1, act=tf.nn.relu6)
        y = layers.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False)(y)
        y = layers.Activation(tf.nn.relu6)(layers.BatchNormalization()(y))
        y = conv_bn(y, filters, 1, act=None)
        x = layers.Add()([x, y]) if strides == 1 and x.shape[-1] == filters else y
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, layers.Dense(10)(layers.Dropout(0.2)(x)))


def separable():
    """SeparableConv2D, swish, max and average pooling, a softmax output."""
    inp = keras.Input((28, 28, 1))
    x = layers.SeparableConv2D(16, 3, padding="same", activation="swish")(inp)
    x = layers.MaxPooling2D()(x)
    x = layers.BatchNormalization()(layers.SeparableConv2D(32, 3, padding="same", activation="swish")(x))
    x = layers.AveragePooling2D()(x)
    x = layers.Flatten()(x)
    return keras.Model(inp, layers.Dense(10, activation="softmax")(x))


def resnet():
    """Residual blocks with strided convolutions, a projection shortcut, zero padding."""
    inp = keras.Input((28, 28, 1))
    x = layers.ZeroPadding2D(2)(inp)
    x = conv_bn(x, 16, 5)
    for filters, strides in ((16, 1), (32, 2)):
        y = conv_bn(x, filters, 3, strides)
        y = conv_bn(y, filters, 3, act=None)
        s = x if strides == 1 else conv_bn(x, filters, 1, strides, act=None)
        x = layers.Activation("relu")(layers.Add()([y, s]))
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inp, layers.Dense(10)(x))


def densenet():
    """Dense connections (Concatenate), a transition with average pooling."""
    inp = keras.Input((28, 28, 1))
    x = layers.Conv2D(16, 3, padding="same")(inp)
    for _ in range(3):
        y = layers.Conv2D(8, 3, padding="same")(layers.Activation("relu")(layers.BatchNormalization()(x)))
        x = layers.Concatenate()([x, y])
    x = layers.AveragePooling2D()(layers.Conv2D(20, 1)(x))
    return keras.Model(inp, layers.Dense(10)(layers.GlobalMaxPooling2D()(x)))


def vit():
    """Patches, a learned position embedding, LayerNormalization, MultiHeadAttention, gelu MLP."""
    inp = keras.Input((28, 28, 1))
    x = layers.Conv2D(32, 4, strides=4)(inp)
    x = layers.Reshape((49, 32))(x)
    x = x + layers.Embedding(49, 32)(tf.range(49))
    for _ in range(2):
        y = layers.LayerNormalization(epsilon=1e-6)(x)
        x = x + layers.MultiHeadAttention(num_heads=4, key_dim=8)(y, y)
        y = layers.LayerNormalization(epsilon=1e-6)(x)
        x = x + layers.Dense(32)(layers.Dense(64, activation="gelu")(y))
    x = layers.GlobalAveragePooling1D()(layers.LayerNormalization(epsilon=1e-6)(x))
    return keras.Model(inp, layers.Dense(10)(x))


def recurrent():
    """The image's rows as a sequence: an LSTM returning sequences, then a GRU."""
    inp = keras.Input((28, 28, 1))
    x = layers.Reshape((28, 28))(inp)
    x = layers.LSTM(24, return_sequences=True)(x)
    x = layers.GRU(16)(x)
    return keras.Model(inp, layers.Dense(10)(x))


MODELS = {"keras_mobilenet": mobilenet, "keras_separable": separable, "keras_resnet": resnet,
          "keras_densenet": densenet, "keras_vit": vit, "keras_recurrent": recurrent}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(f"tensorflow {tf.__version__}, tf2onnx {tf2onnx.__version__}", flush=True)
    for i, (name, make) in enumerate(MODELS.items()):
        if args.only and name not in args.only:
            continue
        tf.keras.utils.set_random_seed(SEED + i)
        model = make()
        x = np.random.default_rng(SEED + i).standard_normal((3, 28, 28, 1)).astype(np.float32)
        y = model(x, training=False).numpy()
        path = os.path.join(args.out, f"{name}.op17.onnx")
        try:
            spec = (tf.TensorSpec((None, 28, 28, 1), tf.float32, name="input"),)
            tf2onnx.convert.from_keras(model, input_signature=spec, opset=17, output_path=path)
            np.save(path[:-5] + ".input.npy", x)
            np.save(path[:-5] + ".output.npy", y)
            print(f"=== {name}: {model.count_params()} parameters, {os.path.getsize(path)} bytes", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"FAILED: {name}: {e!r}", flush=True)


if __name__ == "__main__":
    main()
