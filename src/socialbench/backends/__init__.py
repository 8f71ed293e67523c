"""Model backends. See :mod:`socialbench.core.backend` for the plug-in contract."""

from socialbench.core.backend import (
    Backend,
    BackendContext,
    ImagePart,
    Message,
    ModelSpec,
    Request,
    Response,
    available_backends,
    create_backend,
    get_backend_class,
    register,
)

__all__ = [
    "Backend",
    "BackendContext",
    "ImagePart",
    "Message",
    "ModelSpec",
    "Request",
    "Response",
    "available_backends",
    "create_backend",
    "get_backend_class",
    "register",
]
